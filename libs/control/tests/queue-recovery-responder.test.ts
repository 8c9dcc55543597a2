import { queueRecoveryGroup } from '@lockfabric/locks-common';
import type { ProtocolRecovery } from '@lockfabric/locks-common';
import { createSimCluster } from '@lockfabric/sim';
import { describe, expect, it } from 'vitest';
import { InMemoryControlBus } from '../src/in-memory-bus.js';
import { MalformedTally, silentLogger } from '../src/logger.js';
import { BusQueueParticipant } from '../src/queue-lock-recovery/bus-queue-participant.js';
import { startQueueRecoveryResponder } from '../src/queue-lock-recovery/queue-recovery-responder.js';
import { queueLockProtocols } from '../src/recovery-rules.js';
import { createSubjects } from '../src/subjects.js';

const subjects = createSubjects('queuetest');

/** One compute node's responder for a run of `protocol`, and a coordinator-side participant calling it. */
function rig(protocol: string) {
  const { cluster, scheduler } = createSimCluster({ seed: 1, lockCount: 4, entryBytes: 16, jitterNs: 0, computeNodes: 1 });
  const node = cluster.computeNodeIds[0]!;
  const ports = cluster.clientPorts({ node, client: 0 });
  const bus = new InMemoryControlBus(scheduler);
  const responder = startQueueRecoveryResponder({
    bus: bus.connect('node'), subjects, clock: cluster.clock, node, run: () => ({ protocol, locks: ports.locks }), verbs: ports.verbs, logger: silentLogger, malformed: new MalformedTally(),
  });
  const participant = new BusQueueParticipant(bus.connect('coordinator'), subjects, node, 20, 500);
  const call = async <T>(step: () => Promise<T>): Promise<T> => {
    let done = false;
    const result = step().finally(() => void (done = true));
    await scheduler.run({ stop: () => done, maxEvents: 10_000 });
    return result;
  };
  return { node, locks: ports.locks, responder, participant, call };
}

describe('queue-lock recovery: which nodes take part', () => {
  it('a node answers the gate as active only when its run has a queue-recovery group there, whatever the protocol is called', async () => {
    const without = rig('some-queue-lock');
    expect(await without.call(() => without.participant.gate(1n, [9]))).toBe(false);
    expect(without.responder.answered.gate).toBe(1);
    without.responder.close();

    const joined = rig('another-protocol');
    const group = queueRecoveryGroup(joined.locks, joined.node);
    expect(await joined.call(() => joined.participant.gate(1n, [9]))).toBe(true);
    expect(joined.participant.protocol).toBe('another-protocol');
    expect(group.gated).toBe(true);
    expect(group.isDead(9)).toBe(true);
    await joined.call(() => joined.participant.resume(1n));
    expect(group.gated).toBe(false);
    joined.responder.close();
  });

  it('the hook closes the actions of the protocols whose rule names the queue-lock recovery, in the given order', () => {
    const rule = (driver?: 'queue-lock'): ProtocolRecovery => ({ compute: { mechanism: 'driven', ...(driver ? { driver } : {}), action: 'a' } });
    const protocols = new Map<string, ProtocolRecovery>([
      ['b', rule('queue-lock')],
      ['own-driver', rule()],
      ['leased', { compute: { mechanism: 'lease', boundMs: 1, action: 'a' } }],
      ['a', rule('queue-lock')],
    ]);
    expect(queueLockProtocols(protocols)).toStrictEqual(['b', 'a']);
    expect(queueLockProtocols()).toStrictEqual([]);
  });
});
