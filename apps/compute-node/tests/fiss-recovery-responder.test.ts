import { create, toBinary } from '@bufbuild/protobuf';
import type { NatsConnection } from '@nats-io/transport-node';
import type { ServerReport } from '@lockfabric/lock-catalog';
import { GatedSwitchPort, FissWireError, machineOrdersFromWire, startFissRecoveryResponder } from '@lockfabric/lock-catalog-control';
import type { FissResponder, FissResponderDeps, RecoveryPool } from '@lockfabric/lock-catalog-control';
import { MalformedInputCounter, NatsControlBus, connectNats, createSubjects, silentLogger } from '@lockfabric/live';
import { RealClock } from '@lockfabric/realtime';
import type { LockPacket, SwitchPort } from '@lockfabric/ports';
import { startNatsServer } from '@lockfabric/testkit';
import type { NatsServerHandle } from '@lockfabric/testkit';
import { FissMachineOrdersSchema, FissRecoveryReplySchema, FissRecoveryRequestSchema, LockMode, decodeWire } from '@lockfabric/wire';
import type { FissRecoveryReply } from '@lockfabric/wire';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const subjects = createSubjects('fisstest');
const clock = new RealClock();

/** The library responder over NATS, as the compute node runs it. */
function respond(nc: NatsConnection, deps: Omit<FissResponderDeps, 'bus' | 'clock' | 'subjects'>): FissResponder {
  return startFissRecoveryResponder({ bus: new NatsControlBus(nc), clock, subjects, ...deps });
}

function packet(seq: number): LockPacket {
  return { type: 'acquire', lock: 1, machine: 1, task: seq, mode: 'exclusive', incarnation: 0, seq, flags: 0 };
}

/** A switch link that records what is sent and lets the test deliver packets. */
function fakeLink(machine = 1): SwitchPort & { sent: LockPacket[]; deliver(p: LockPacket): void } {
  const handlers = new Set<(p: LockPacket) => void>();
  return {
    machine,
    sent: [],
    send(p) {
      this.sent.push(p);
    },
    onPacket(handler) {
      handlers.add(handler);
      return () => void handlers.delete(handler);
    },
    deliver: (p) => handlers.forEach((h) => h(p)),
  };
}

describe('GatedSwitchPort', () => {
  it('passes through while open; closed it holds sends (bounded) and drops arrivals; opening sends what it held, in order', () => {
    const link = fakeLink();
    const gate = new GatedSwitchPort(link, 2);
    const got: number[] = [];
    gate.onPacket((p) => got.push(p.seq));
    gate.send(packet(1));
    link.deliver(packet(2));
    gate.close();
    gate.send(packet(3));
    gate.send(packet(4));
    gate.send(packet(5)); // beyond the bound: dropped, the reliable link resends it
    link.deliver(packet(6));
    expect(link.sent.map((p) => p.seq)).toStrictEqual([1]);
    expect(got).toStrictEqual([2]);
    expect([gate.heldDropped, gate.arrivalsDropped]).toStrictEqual([1, 1]);
    expect(gate.open()).toBe(2);
    expect(link.sent.map((p) => p.seq)).toStrictEqual([1, 3, 4]);
    link.deliver(packet(7));
    expect(got).toStrictEqual([2, 7]);
  });
});

describe('the compute node\'s half of the recovery wire', () => {
  it('rejects orders this build cannot read: an unknown mode, a missing request', () => {
    const badMode = create(FissMachineOrdersSchema, { machine: 1, agents: [{ lid: 1, mode: LockMode.UNSPECIFIED }] });
    expect(() => machineOrdersFromWire(badMode, 'test')).toThrow(/mode/);
    expect(() => machineOrdersFromWire(create(FissMachineOrdersSchema, { machine: 1, wake: [{ lid: 3 }] }), 'test')).toThrow(FissWireError);
    expect(() => machineOrdersFromWire(create(FissMachineOrdersSchema, { machine: 1, abort: [{ lid: 3, reason: 'x' }] }), 'test')).toThrow(FissWireError);
  });
});

describe('FissLock recovery responder over NATS (the coordinator played by raw requests)', () => {
  let nats: NatsServerHandle;
  let nc: NatsConnection;
  let responder: FissResponder;
  const log: string[] = [];
  const gate = new GatedSwitchPort(fakeLink());
  const malformed = new MalformedInputCounter({ logger: silentLogger });
  const report: ServerReport = { machine: 1, agents: [], clients: [{ lid: 0, mid: 1, task: 11, mode: 'exclusive', state: 'granted', startNs: 1 }] };
  const pool: RecoveryPool = {
    pauseForRecovery: () => void log.push('pause'),
    recoveryReport: () => (log.push('report'), report),
    applyRecovery: (orders) => void log.push(`apply ${orders.agents.length} gate=${gate.isClosed ? 'closed' : 'open'}`),
  };

  const call = async (verb: string, epoch: bigint, orders?: { machine: number }): Promise<FissRecoveryReply> => {
    const request = create(FissRecoveryRequestSchema, { epoch, ...(orders ? { orders: create(FissMachineOrdersSchema, { machine: orders.machine, agents: [{ lid: 0, mode: LockMode.EXCLUSIVE, holders: [{ mid: 1, task: 11, mode: LockMode.EXCLUSIVE }] }] }) } : {}) });
    const reply = await nc.request(subjects.recoveryCall('fiss', 1, verb), toBinary(FissRecoveryRequestSchema, request), { timeout: 2_000 });
    return decodeWire(FissRecoveryReplySchema, reply.data, 'test');
  };

  beforeAll(async () => {
    nats = await startNatsServer();
    nc = await connectNats({ servers: nats.url, name: 'fiss-responder-test', logger: silentLogger });
    responder = respond(nc, { node: 1, pool: () => ({ pool, policy: 'starvation-prevention' }), gate, logger: silentLogger, malformed });
    await nc.flush();
  });
  afterAll(async () => {
    responder?.close();
    await nc?.close();
    await nats?.stop();
  });

  it('pause, report, apply (gate closed first), resume (gate open) in order; older epochs and out-of-order calls are refused', async () => {
    expect(await call('report', 5n)).toMatchObject({ error: expect.stringMatching(/pause first/) });
    expect(await call('pause', 5n)).toMatchObject({ active: true, policy: 'starvation-prevention', error: '' });
    const reported = await call('report', 5n);
    expect(reported.report?.clients.map((c) => c.request?.task)).toStrictEqual([11]);
    expect(gate.isClosed).toBe(true); // from the report on, nothing moves until S2 is applied
    expect(await call('apply', 5n, { machine: 2 })).toMatchObject({ error: expect.stringMatching(/no orders for this machine/) });
    expect(await call('apply', 5n, { machine: 1 })).toMatchObject({ active: true, error: '' });
    expect(gate.isClosed).toBe(true);
    expect(responder.phase).toBe('applied');
    expect(await call('pause', 4n)).toMatchObject({ error: expect.stringMatching(/older/) });
    expect(await call('resume', 5n)).toMatchObject({ active: true, error: '' });
    expect(gate.isClosed).toBe(false);
    expect(log).toStrictEqual(['pause', 'report', 'apply 1 gate=closed']);
  });

  it('lock-report: one lock read with nothing paused or closed, the epoch and phase kept; a stale coordinator is refused', async () => {
    const events: string[] = [];
    const lockPool: RecoveryPool = {
      pauseForRecovery: () => void events.push('pause'),
      recoveryReport: () => report,
      applyRecovery: () => void events.push('apply'),
      lockReport: (lid) => (events.push(`lock-report ${lid}`), { machine: 3, agents: [], clients: [{ lid, mid: 3, task: 4, mode: 'shared', state: 'granted', startNs: 0 }] }),
    };
    const lockGate = new GatedSwitchPort(fakeLink(3));
    const other = respond(nc, { node: 3, pool: () => ({ pool: lockPool, policy: 'read-preferring' }), gate: lockGate, logger: silentLogger, malformed });
    const ask = async (verb: string, epoch: bigint, lock = 0): Promise<FissRecoveryReply> => {
      const reply = await nc.request(subjects.recoveryCall('fiss', 3, verb), toBinary(FissRecoveryRequestSchema, create(FissRecoveryRequestSchema, { epoch, lock })), { timeout: 2_000 });
      return decodeWire(FissRecoveryReplySchema, reply.data, 'test');
    };
    try {
      await nc.flush();
      expect(await ask('pause', 6n)).toMatchObject({ active: true, error: '' });
      const reply = await ask('lock-report', 7n, 5);
      expect(reply).toMatchObject({ active: true, error: '', epoch: 6n });
      expect(reply.report?.clients.map((c) => [c.lid, c.request?.task])).toStrictEqual([[5, 4]]);
      // a newer epoch is not taken up (report still follows the pause of epoch 6), the gate stays open
      expect(lockGate.isClosed).toBe(false);
      expect(other.phase).toBe('paused');
      expect(await ask('report', 6n)).toMatchObject({ active: true, error: '' });
      expect(await ask('lock-report', 5n, 5)).toMatchObject({ error: expect.stringMatching(/older/) });
      expect(events).toStrictEqual(['pause', 'lock-report 5']);
      expect(other.answered['lock-report']).toBe(1);
    } finally {
      other.close();
    }
  });

  it('a pause not followed by orders within the limit lets the clients go on (no acquire waits past its timeout)', async () => {
    const events: string[] = [];
    const stand: RecoveryPool = {
      pauseForRecovery: () => void events.push('pause'),
      recoveryReport: () => report,
      applyRecovery: () => void events.push('apply'),
      releaseClients: () => void events.push('released'),
    };
    const other = respond(nc, { node: 2, pool: () => ({ pool: stand, policy: 'read-preferring' }), gate: new GatedSwitchPort(fakeLink(2)), logger: silentLogger, malformed, pauseLimitMs: 30 });
    try {
      await nc.flush();
      const request = create(FissRecoveryRequestSchema, { epoch: 9n });
      await nc.request(subjects.recoveryCall('fiss', 2, 'pause'), toBinary(FissRecoveryRequestSchema, request), { timeout: 2_000 });
      for (let i = 0; i < 200 && !events.includes('released'); i++) await new Promise((r) => setTimeout(r, 10));
      expect(events).toStrictEqual(['pause', 'released']);
      expect(other.phase).toBe('paused'); // the pool itself stays paused until a recovery applies
    } finally {
      other.close();
    }
  });

  it('a malformed request is answered with an error and counted; the responder keeps serving', async () => {
    const before = malformed.count();
    const reply = await nc.request(subjects.recoveryCall('fiss', 1, 'pause'), new Uint8Array([0xff, 0xff, 0xff]), { timeout: 2_000 });
    expect(decodeWire(FissRecoveryReplySchema, reply.data, 'test').error).toMatch(/malformed/);
    expect(malformed.count()).toBe(before + 1);
    expect(await call('pause', 6n)).toMatchObject({ active: true, error: '' });
  });
});
