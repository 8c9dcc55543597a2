import { create, toBinary } from '@bufbuild/protobuf';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { checkHistory, summarizeVerdict } from '@lockfabric/check';
import type { LockPacket } from '@lockfabric/ports';
import { waitFor } from '@lockfabric/testkit';
import { PrepareRunRequestSchema } from '@lockfabric/wire';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Schedule } from '@lockfabric/run-host';
import { prepareBytes, prepareOn, runOn, runRequest, startRig, workload } from './run-rig.js';
import type { CallFailure } from './run-rig.js';

/** A hold long enough that node 1 starts (in this process: milliseconds) while node 2 still holds. */
const HOLD_NS = 2e9;
/** A machine outside the cluster whose packets the test injects into the switch and whose grants it reads. */
const PROBE = 3;

/** The prepared-run timeout under the test's control: `fire()` expires every prepared run now. */
const pending = new Set<() => void>();
const schedule: Schedule = (action) => {
  pending.add(action);
  return () => pending.delete(action);
};
const fireTimeouts = () => {
  const due = [...pending];
  pending.clear();
  for (const action of due) action();
};

const failureOf = async (promise: Promise<unknown>): Promise<CallFailure> => {
  try {
    await promise;
  } catch (error) {
    return error as CallFailure;
  }
  throw new Error('the call succeeded');
};

/**
 * Compute nodes 1 and 2 (in-process ComputeRunServices behind real gRPC servers, real NATS
 * mailboxes, an in-process forward switch). Under ParLock lock 0 is homed on node 1; under
 * SrvLock node 1 is the lock server of every lock. After a srvlock run, node 1's srvlock server
 * lingers (peers' clients of that run might still need it) — and answers whatever reaches it.
 */
describe('compute node start barrier: srvlock then parlock on one cluster', () => {
  let rig: Awaited<ReturnType<typeof startRig>>;
  beforeAll(async () => {
    rig = await startRig({ schedule });
  });
  afterAll(async () => {
    await rig?.stop();
  });
  const one = () => rig.nodes[0]!;
  const two = () => rig.nodes[1]!;

  /** A srvlock run on node 1 alone (one client): afterwards its lock server lingers on node 1. */
  async function srvlockOnNodeOne(runId: string): Promise<void> {
    const { result } = await runOn(one().address, runRequest(runId, 'srvlock', workload({ operations: 5 }))).done;
    expect(result?.acquires).toBe(5n);
    expect(one().service.phase).toBe('idle');
  }

  /**
   * ParLock, one exclusive acquire of lock 0 per node, node 1 started late: node 2's client takes
   * lock 0 and holds it for HOLD_NS; node 1's Run is sent only once node 2 reported its acquire.
   */
  async function staggeredParlock(runId: string, twoPhase: boolean) {
    const r1 = runRequest(runId, 'parlock', workload({ criticalSectionNs: HOLD_NS, seed: 1 }), twoPhase);
    const r2 = runRequest(runId, 'parlock', workload({ criticalSectionNs: HOLD_NS, seed: 2 }), twoPhase);
    if (twoPhase) await Promise.all([prepareOn(one().address, r1), prepareOn(two().address, r2)]);
    const late = runOn(two().address, r2);
    await waitFor(() => late.opsDone() >= 1, { timeoutMs: 10_000, what: "node 2's acquire of lock 0 (homed on node 1)" });
    const early = runOn(one().address, r1);
    const [fromTwo, fromOne] = await Promise.all([late.done, early.done]);
    return { verdict: checkHistory([...fromTwo.history, ...fromOne.history]), acquires: [fromOne.result?.acquires, fromTwo.result?.acquires] };
  }

  it('reproduction, one-phase start: the lingering srvlock server grants node 2 what node 1\'s new parlock manager grants again', async () => {
    await srvlockOnNodeOne('srv-1');
    // Node 1 has not been told about the parlock run at all, yet node 2's acquire of a lock homed
    // there completes: only the previous run's srvlock server can have granted it.
    const { verdict } = await staggeredParlock('par-1', false);
    expect(verdict.ok, summarizeVerdict(verdict)).toBe(false);
    expect(verdict.violations.map((v) => v.lock)).toContain(0);
  });

  it('two-phase start: node 1 prepared before any client runs, so its parlock manager queues node 1 behind node 2', async () => {
    await srvlockOnNodeOne('srv-2');
    const { verdict, acquires } = await staggeredParlock('par-2', true);
    expect(verdict.violations, summarizeVerdict(verdict)).toEqual([]);
    expect(verdict.ok).toBe(true);
    expect(acquires).toEqual([1n, 1n]);
  });

  it('Prepare stops the lingering service: a packet only the old srvlock server would answer gets no grant', async () => {
    await srvlockOnNodeOne('srv-3');
    const grants: LockPacket[] = [];
    const unsubscribe = rig.fabricSwitch.port(PROBE).onPacket((p) => p.type === 'grant' && grants.push(p));
    try {
      const acquire = (lock: number, task: number): LockPacket => ({ type: 'acquire', lock, machine: PROBE, task, mode: 'exclusive', incarnation: 0, seq: 1, flags: 0, dst: 1 });
      // Lingering: node 1's srvlock server grants any lock to anyone (lock 3 here: lock 1 must stay free).
      rig.fabricSwitch.inject(acquire(3, 10));
      await waitFor(() => grants.some((g) => g.task === 10), { what: 'the lingering srvlock grant' });
      await Promise.all([
        prepareOn(one().address, runRequest('par-3', 'parlock', workload({ seed: 1 }), true)),
        prepareOn(two().address, runRequest('par-3', 'parlock', workload({ seed: 2 }), true)),
      ]);
      // Under parlock lock 1 is homed on node 2, so node 1 must ignore it; lock 0 is node 1's own.
      // The switch delivers in order and the manager answers synchronously, so once lock 0's grant
      // is here, any grant of lock 1 would be here too.
      rig.fabricSwitch.inject(acquire(1, 11));
      rig.fabricSwitch.inject(acquire(0, 12));
      await waitFor(() => grants.some((g) => g.task === 12), { what: "node 1's parlock grant of lock 0" });
      expect(grants.filter((g) => g.task === 11)).toEqual([]);
    } finally {
      unsubscribe();
      fireTimeouts();
    }
  });

  it('a prepared run never started expires: its node service stops and its Run is refused', async () => {
    const request = runRequest('par-4', 'parlock', workload(), true);
    const answer = await prepareOn(one().address, request);
    expect(answer.runId).toBe('par-4');
    expect(answer.expiresInMs).toBeGreaterThan(0n);
    expect(one().service.phase).toBe('prepared');
    expect(one().service.current?.protocol).toBe('parlock');
    expect(rig.fabricSwitch.listeners(1)).toBe(1);
    fireTimeouts();
    expect(one().service.phase).toBe('idle');
    expect(one().service.current).toBeUndefined();
    expect(rig.fabricSwitch.listeners(1)).toBe(0);
    const refused = await failureOf(runOn(one().address, request).done);
    expect(refused.code).toBe(GrpcStatus.FAILED_PRECONDITION);
    expect(refused.details).toMatch(/does not hold run 'par-4' prepared \(it was expired/);
  });

  it('refusals: busy while running, another run id, a changed request, and a Run marked prepared that was not', async () => {
    const notPrepared = await failureOf(runOn(one().address, runRequest('never', 'parlock', workload(), true)).done);
    expect(notPrepared.code).toBe(GrpcStatus.FAILED_PRECONDITION);
    expect(notPrepared.details).toMatch(/never prepared here/);

    await prepareOn(one().address, runRequest('par-5', 'parlock', workload()));
    const mismatch = await failureOf(runOn(one().address, runRequest('par-6', 'parlock', workload())).done);
    expect(mismatch.code).toBe(GrpcStatus.FAILED_PRECONDITION);
    expect(mismatch.details).toMatch(/holds run 'par-5' prepared; a Run of 'par-6'/);
    const changed = await failureOf(runOn(one().address, runRequest('par-5', 'parlock', workload({ locks: 2 }))).done);
    expect(changed.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(one().service.phase).toBe('prepared');

    const running = runOn(one().address, runRequest('par-5', 'parlock', workload()));
    // par-5's one client holds nothing long; a second run keeps node 1 busy: start it and ask meanwhile.
    await running.done;
    const long = runOn(one().address, runRequest('par-7', 'parlock', workload({ criticalSectionNs: 1e9 })));
    await waitFor(() => one().service.phase === 'running', { what: 'node 1 running par-7' });
    const busyPrepare = await failureOf(prepareOn(one().address, runRequest('par-8', 'parlock', workload())));
    expect(busyPrepare.code).toBe(GrpcStatus.FAILED_PRECONDITION);
    expect(busyPrepare.details).toMatch(/already running run 'par-7'/);
    const busyRun = await failureOf(runOn(one().address, runRequest('par-8', 'parlock', workload())).done);
    expect(busyRun.code).toBe(GrpcStatus.FAILED_PRECONDITION);
    const { result } = await long.done;
    expect(result?.acquires).toBe(1n);
  });

  it('bad Prepares are INVALID_ARGUMENT and leave the node idle', async () => {
    const tooMany = await failureOf(prepareOn(one().address, runRequest('par-9', 'parlock', workload({ clients: 9 }))));
    expect(tooMany.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(tooMany.details).toMatch(/hosts at most 8 clients/);
    const unknown = await failureOf(prepareOn(one().address, runRequest('par-9', 'nosuchlock', workload())));
    expect(unknown.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    const noRun = await failureOf(prepareBytes(one().address, toBinary(PrepareRunRequestSchema, create(PrepareRunRequestSchema, {}))));
    expect(noRun.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    const garbage = await failureOf(prepareBytes(one().address, Uint8Array.of(0xff, 0xff, 0xff)));
    expect(garbage.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(one().service.phase).toBe('idle');
  });

  it("a Prepare drops mail the previous run left queued for this node's clients; a one-phase start keeps it", async () => {
    const [hubOne, hubTwo] = [rig.hubs[0]!, rig.hubs[1]!];
    const straggler = () => hubTwo.mailbox(7).send({ kind: 'custom', to: { node: 1, client: 0 }, lock: 0, data: Uint8Array.of(0xee) });
    straggler();
    await waitFor(() => hubOne.queued(0) === 1, { what: "the straggler in node 1's client 0 queue" });
    await prepareOn(one().address, runRequest('par-11', 'parlock', workload(), true));
    expect(hubOne.queued(0)).toBe(0);
    fireTimeouts();
    straggler();
    await waitFor(() => hubOne.queued(0) === 1, { what: "the straggler in node 1's client 0 queue" });
    const { result } = await runOn(one().address, runRequest('par-12', 'parlock', workload())).done;
    expect(result?.acquires).toBe(1n);
    // Not barrier-safe: a peer's client may have sent this run's first message already; nothing is dropped.
    expect(hubOne.queued(0)).toBe(1);
  });

  it('a node with no clients of the run still prepares and runs its node service (a lock home for the others)', async () => {
    const request = runRequest('par-10', 'parlock', workload({ clients: 0, operations: 0 }), true);
    await prepareOn(two().address, request);
    expect(two().service.current?.protocol).toBe('parlock');
    const { result, history } = await runOn(two().address, request).done;
    expect(result?.acquires).toBe(0n);
    expect(history).toEqual([]);
    // Its manager lingers for the other nodes' clients.
    expect(rig.fabricSwitch.listeners(2)).toBe(1);
    expect(two().service.phase).toBe('idle');
  });
});
