import { fromBinary, toBinary } from '@bufbuild/protobuf';
import type { NatsConnection } from '@nats-io/transport-node';
import { BusFissParticipant, FissCallError, GatedSwitchPort, machineOrdersFromWire, machineOrdersToWire, runFissRecovery, serverReportFromWire, serverReportToWire, startFissRecoveryResponder } from '@lockfabric/lock-catalog-control';
import type { FissResponder, RecoveryPool } from '@lockfabric/lock-catalog-control';
import type { DeciderControl, MachineOrders, ServerReport } from '@lockfabric/lock-catalog';
import { MalformedInputCounter, NatsControlBus, connectNats, createSubjects, silentLogger } from '@lockfabric/live';
import { RealClock } from '@lockfabric/realtime';
import type { LockPacket, SwitchPort } from '@lockfabric/ports';
import { startNatsServer } from '@lockfabric/testkit';
import type { NatsServerHandle } from '@lockfabric/testkit';
import { FissMachineOrdersSchema, FissServerReportSchema } from '@lockfabric/wire';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The two ends of FissLock recovery over a real nats-server: the coordinator's participants and
// driver against the compute nodes' responders (the FissLock module's control entry, as the apps run them), with
// stand-in agent pools and switch control: each side encodes what it sends, and they must agree.
const subjects = createSubjects('fisswire');

function idleLink(machine: number): SwitchPort {
  return { machine, send: (_p: LockPacket) => undefined, onPacket: () => () => undefined };
}

describe('FissLock recovery wire forms: the compute node and the coordinator agree', () => {
  it('S1 reports and S2 orders survive encoding, bytes and decoding unchanged', () => {
    const report: ServerReport = {
      machine: 4,
      agents: [
        { lid: 7, machine: 4, mode: 'shared', holders: [{ mid: 4, task: 0x3f_fff1 }, { mid: 2, task: 5 }], wqueue: [{ mid: 9, task: 1, mode: 'exclusive' }], state: 'live' },
        { lid: 8, machine: 4, mode: 'exclusive', holders: [], wqueue: [], state: 'pending' },
      ],
      clients: [
        { lid: 7, mid: 4, task: 0x3f_fff1, mode: 'shared', state: 'granted', startNs: 0 },
        { lid: 9, mid: 4, task: 12, mode: 'exclusive', state: 'pending', startNs: 123_456_789_012 },
        { lid: 9, mid: 4, task: 11, mode: 'exclusive', state: 'aborting', startNs: 5 },
      ],
    };
    const bytes = toBinary(FissServerReportSchema, serverReportToWire(report));
    expect(serverReportFromWire(fromBinary(FissServerReportSchema, bytes), 'test')).toStrictEqual(report);
    const orders: MachineOrders = {
      machine: 4,
      agents: [{ lid: 7, machine: 4, mode: 'shared', holders: [{ mid: 4, task: 3, mode: 'shared' }], wqueue: [{ mid: 9, task: 1, mode: 'exclusive' }], inca: 0 }],
      wake: [{ lid: 7, mid: 4, task: 3, mode: 'shared' }],
      abort: [{ lid: 9, mid: 4, task: 12, reason: 'dropped by S2' }],
    };
    const orderBytes = toBinary(FissMachineOrdersSchema, machineOrdersToWire(orders));
    expect(machineOrdersFromWire(fromBinary(FissMachineOrdersSchema, orderBytes), 'test')).toStrictEqual(orders);
  });
});

interface FakeNode {
  readonly gate: GatedSwitchPort;
  readonly log: string[];
  readonly responder: FissResponder;
  applied?: MachineOrders;
}

describe('FissLock recovery over NATS: coordinator participants and compute-node responders', () => {
  let nats: NatsServerHandle;
  let nc: NatsConnection;
  const nodes = new Map<number, FakeNode>();

  // machine 1 holds lock 0 (its own agent) with machine 2 waiting; machine 3 runs no FissLock
  const reports: Record<number, ServerReport> = {
    1: { machine: 1, agents: [{ lid: 0, machine: 1, mode: 'exclusive', holders: [{ mid: 1, task: 11 }], wqueue: [{ mid: 2, task: 21, mode: 'shared' }], state: 'live' }], clients: [{ lid: 0, mid: 1, task: 11, mode: 'exclusive', state: 'granted', startNs: 1 }] },
    2: { machine: 2, agents: [], clients: [{ lid: 0, mid: 2, task: 21, mode: 'shared', state: 'pending', startNs: 2 }] },
  };

  function startNode(machine: number): void {
    const log: string[] = [];
    const gate = new GatedSwitchPort(idleLink(machine));
    const pool: RecoveryPool = {
      pauseForRecovery: () => void log.push('pause'),
      recoveryReport: () => (log.push('report'), reports[machine]!),
      applyRecovery: (orders) => {
        log.push(`apply gate=${gate.isClosed ? 'closed' : 'open'}`);
        node.applied = orders;
      },
    };
    const responder = startFissRecoveryResponder({
      bus: new NatsControlBus(nc),
      clock: new RealClock(),
      subjects,
      node: machine,
      pool: () => (reports[machine] ? { pool, policy: 'write-preferring' } : undefined),
      gate,
      logger: silentLogger,
      malformed: new MalformedInputCounter({ logger: silentLogger }),
    });
    const node: FakeNode = { gate, log, responder };
    nodes.set(machine, node);
  }

  beforeAll(async () => {
    nats = await startNatsServer();
    nc = await connectNats({ servers: nats.url, name: 'fiss-wire-test', logger: silentLogger });
    for (const m of [1, 2, 3]) startNode(m);
    await nc.flush();
  });
  afterAll(async () => {
    for (const n of nodes.values()) n.responder.close();
    await nc?.close();
    await nats?.stop();
  });

  it('runs S1–S3 in order; the switch is written while every node holds its traffic, and they resume after S3', async () => {
    const gatesDuringS3: boolean[] = [];
    const writes: string[] = [];
    const control: DeciderControl = {
      arrays: ['fisslock.seq', 'fisslock.free', 'fisslock.rw', 'fisslock.mid', 'fisslock.inca', 'fisslock.pref'],
      readRegister: () => 0,
      fill: () => undefined,
      write: (array, index, values) => {
        gatesDuringS3.push(nodes.get(1)!.gate.isClosed && nodes.get(2)!.gate.isClosed);
        writes.push(`${array}[${index}]=${values.join(',')}`);
      },
    };
    const participants = [1, 2, 3].map((m) => new BusFissParticipant(new NatsControlBus(nc), subjects, m, 2_000));
    let t = 0;
    const run = await runFissRecovery({
      epoch: 9n,
      participants,
      failed: [],
      control,
      policy: () => participants.find((p) => p.policy)?.policy ?? 'read-preferring',
      nowNs: () => (t += 1_000),
    });
    expect(run.problems).toStrictEqual([]);
    expect(run.machines).toStrictEqual([1, 2]); // machine 3 declined: no FissLock pool
    expect(nodes.get(1)!.log).toStrictEqual(['pause', 'report', 'apply gate=closed']);
    expect(nodes.get(3)!.log).toStrictEqual([]);
    // the orders crossed the wire intact: machine 1 keeps its agent, holder and (shared) waiter
    expect(nodes.get(1)!.applied?.agents).toStrictEqual([{ lid: 0, machine: 1, mode: 'exclusive', holders: [{ mid: 1, task: 11, mode: 'exclusive' }], wqueue: [{ mid: 2, task: 21, mode: 'shared' }], inca: 0 }]);
    expect(nodes.get(2)!.applied).toStrictEqual({ machine: 2, agents: [], wake: [], abort: [] });
    expect(gatesDuringS3.length).toBeGreaterThan(0);
    expect(gatesDuringS3.every(Boolean)).toBe(true);
    // write-preferring (learnt from the pause replies): a queued reader does not set the writer-waiting bit
    expect(writes).toContain('fisslock.mid[0]=2');
    expect(writes.some((w) => w.startsWith('fisslock.pref'))).toBe(false);
    expect([nodes.get(1)!.gate.isClosed, nodes.get(2)!.gate.isClosed]).toStrictEqual([false, false]);
  });

  it('a participant surfaces refusals as FissCallError: an older epoch, an apply without a pause', async () => {
    const participant = new BusFissParticipant(new NatsControlBus(nc), subjects, 1, 2_000);
    await expect(participant.pause(8n)).rejects.toBeInstanceOf(FissCallError);
    await expect(participant.apply(9n, { machine: 1, agents: [], wake: [], abort: [] })).rejects.toThrow(/pause first/);
    expect(await participant.pause(10n)).toBe(true);
    await participant.apply(10n, { machine: 1, agents: [], wake: [], abort: [] });
    await participant.resume(10n);
    // a node that is not there: no answer within the timeout
    await expect(new BusFissParticipant(new NatsControlBus(nc), subjects, 99, 200).pause(11n)).rejects.toThrow(/no answer/);
  });
});
