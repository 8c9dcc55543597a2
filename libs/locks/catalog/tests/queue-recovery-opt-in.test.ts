import { existingQueueRecoveryGroup } from '@lockfabric/locks-common';
import type { ProtocolDefinition, ProtocolOptions } from '@lockfabric/locks-common';
import { createSimCluster } from '@lockfabric/sim';
import { describe, expect, it } from 'vitest';
import { DEFAULT_SWITCH_PROGRAM, availableProtocols, protocolById, switchProgramKind } from '../src/index.js';

/**
 * Whether a protocol's clients put their node in the coordinator's queue-lock recovery: the node's
 * responder answers the gate (and later aborts and resets) exactly when the run's lock table has a
 * queue-recovery group on that node (libs/control queue-recovery-responder.ts).
 */
function joinsQueueRecovery(protocol: ProtocolDefinition, options: ProtocolOptions = {}): boolean {
  const switchProgram = protocol.fabric === 'switch' ? switchProgramKind(DEFAULT_SWITCH_PROGRAM)?.create({}) : undefined;
  const { cluster } = createSimCluster({ seed: 1, lockCount: 4, entryBytes: protocol.entryBytes, jitterNs: 0, computeNodes: 2, ...(switchProgram ? { switchProgram } : {}) });
  const node = cluster.computeNodeIds[0]!;
  const ports = [0, 1].map((client) => cluster.clientPorts({ node, client }));
  for (const p of ports) protocol.createClient(p, options);
  return existingQueueRecoveryGroup(ports[0]!.locks, node) !== undefined;
}

const declaresQueueLockRecovery = (protocol: ProtocolDefinition): boolean => protocol.recovery.compute.mechanism === 'driven' && protocol.recovery.compute.driver === 'queue-lock';

describe('queue-lock recovery is opted into by the protocol', () => {
  it('a protocol takes part exactly when its rule names the queue-lock recovery', () => {
    const joined = availableProtocols().filter((p) => joinsQueueRecovery(p));
    expect(joined.map((p) => p.id)).toStrictEqual(availableProtocols().filter(declaresQueueLockRecovery).map((p) => p.id));
    // some protocol does take part, and one that builds on a queue lock's client without opting in (rma-rw) does not
    expect(joined.length).toBeGreaterThan(0);
    expect(joined.map((p) => p.id)).not.toContain(protocolById('rma-rw').id);
  });

  it('catches a protocol that joins without opting in: rma-rw whose MCS writer queue joins as every MCS client once did (mutant)', () => {
    const rmaRw = protocolById('rma-rw');
    expect(declaresQueueLockRecovery(rmaRw)).toBe(false);
    expect(joinsQueueRecovery(rmaRw)).toBe(false);
    expect(joinsQueueRecovery(rmaRw, { mutantJoinQueueRecovery: true })).toBe(true);
  });
});
