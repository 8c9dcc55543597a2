import { HistoryRecorder, checkHistory } from '@lockfabric/check';
import { existingQueueRecoveryGroup, groupParticipant, runQueueLockRecovery, zeroLockTable } from '@lockfabric/locks-common';
import type { ProtocolDefinition, ProtocolOptions, QueueRecoveryRun } from '@lockfabric/locks-common';
import { clientKey } from '@lockfabric/ports';
import type { Grant, LockClient, LockId } from '@lockfabric/ports';
import { createSimCluster } from '@lockfabric/sim';
import { ScenarioSetupError } from './errors.js';

/** Locks of the scenario: D (dead) holds L, a survivor C holds M. */
const L = 0;
const M = 1;
const TIMEOUT_MS = 50;
const US = 1_000;

/** A `sim` cluster of two compute nodes (one survivor, one that dies) with recorded clients and the recovery wired to the survivor. */
function rig(protocol: ProtocolDefinition, options: ProtocolOptions) {
  const { cluster, scheduler } = createSimCluster({ seed: 1, lockCount: 16, entryBytes: protocol.entryBytes, jitterNs: 0, computeNodes: 2 });
  const [survivorNode, deadNode] = cluster.computeNodeIds as [number, number];
  const history = new HistoryRecorder();
  const now = () => cluster.clock.nowNs();
  const at = (ns: number) => cluster.clock.sleep(Math.max(0, ns - now()));
  const client = (node: number, index: number) => {
    const ports = cluster.clientPorts({ node, client: index });
    const lock = protocol.createClient(ports, options) as LockClient;
    const key = clientKey(ports.self);
    return {
      ports,
      async acquire(id: LockId): Promise<Grant> {
        history.invoke(key, 'acquire', id, 'exclusive', now());
        try {
          const grant = await lock.acquire(id, 'exclusive', { timeoutMs: TIMEOUT_MS });
          history.ok(key, 'acquire', id, 'exclusive', now());
          return grant;
        } catch (error) {
          history.fail(key, 'acquire', id, 'exclusive', now(), (error as Error).name);
          throw error;
        }
      },
      async release(grant: Grant): Promise<void> {
        history.invoke(key, 'release', grant.lock, 'exclusive', now());
        await lock.release(grant);
        history.ok(key, 'release', grant.lock, 'exclusive', now());
      },
    };
  };
  type Client = ReturnType<typeof client>;
  const survivors = (...indexes: number[]) => indexes.map((i) => client(survivorNode, i)) as Client[];
  const recover = (via: Client, drainPollNs: number, mutantSkipDrain: boolean) => {
    const group = existingQueueRecoveryGroup(via.ports.locks, survivorNode);
    if (!group) throw new ScenarioSetupError('queue recovery', 'no recovery group: the clients did not register');
    return runQueueLockRecovery({
      epoch: 1n,
      participants: [groupParticipant(survivorNode, group)],
      deadNodes: [deadNode],
      resetTable: async () => void (await zeroLockTable(via.ports.verbs, via.ports.locks)),
      nowNs: now,
      pause: () => cluster.clock.sleep(drainPollNs),
      maxDrainRounds: 100_000,
      mutantSkipDrain,
    });
  };
  const outcome = (p: Promise<unknown>) => p.then(() => 'granted', (error: unknown) => (error as Error).name);
  /** Runs `script` on the scheduler; checks the history with the dead client failed at `diedAtNs()`. */
  const play = async (script: () => Promise<void>, dead: Client, diedAtNs: () => number) => {
    let done = false;
    const running = script().then(() => void (done = true));
    running.catch(() => undefined);
    const run = await scheduler.run({ stop: () => done, maxEvents: 400_000 });
    if (done) await running;
    return { run, done, verdict: checkHistory(history, { failedClients: new Map([[clientKey(dead.ports.self), diedAtNs()]]) }) };
  };
  return { survivorNode, deadNode, now, at, client, survivors, recover, outcome, play };
}

/**
 * A holder dies and the coordinator's recovery runs over one surviving compute node, on `sim`:
 * - D (the dead node's client) holds L and never releases; A queues behind it on L;
 * - C (a survivor) holds M until 300 µs; E queues behind C on M;
 * - at 100 µs the recovery gates the survivor; F asks for M at 200 µs (held back by the gate);
 * - C releases, E gets M and releases at 400 µs: only then can the survivor abort A and reset.
 * Afterwards A asks for L again. Every step is in the history the checker reads. With
 * `mutantSkipDrain` the recovery resets and resumes at once, and F gets M (lock 1) beside C.
 * Shared by the mcs and alock tests (`holder-crash-recovery.test.ts`).
 */
export async function queueHolderDiesScenario(protocol: ProtocolDefinition, options: ProtocolOptions, mutantSkipDrain = false) {
  const r = rig(protocol, options);
  const d = r.client(r.deadNode, 0);
  const [a, c, e, f] = r.survivors(1, 2, 3, 4) as [ReturnType<typeof r.client>, ReturnType<typeof r.client>, ReturnType<typeof r.client>, ReturnType<typeof r.client>];
  const steps: string[] = [];
  let diedAtNs = 0;
  let recovery: QueueRecoveryRun | undefined;
  const played = await r.play(
    async () => {
      await d.acquire(L);
      diedAtNs = r.now();
      const held = await c.acquire(M);
      const aFirst = r.outcome(a.acquire(L));
      const eRun = (async () => {
        const g = await e.acquire(M);
        await r.at(400 * US);
        await e.release(g);
        steps.push('E had M');
      })();
      const fRun = (async () => {
        await r.at(200 * US);
        const g = await f.acquire(M);
        steps.push('F got M');
        await f.release(g);
      })();
      await r.at(100 * US);
      const recovering = r.recover(c, 20 * US, mutantSkipDrain);
      await r.at(300 * US);
      await c.release(held);
      recovery = await recovering;
      steps.push(`A's wait: ${await aFirst}`);
      await Promise.all([eRun, fRun]);
      const again = await a.acquire(L);
      steps.push('A got L');
      await a.release(again);
    },
    d,
    () => diedAtNs,
  );
  return { ...played, steps, recovery };
}

/**
 * A waiter is aborted right after its predecessor handed it the lock (before it polled the grant),
 * and its queue node is reused: the hand-over it never took must not let the reuse in early.
 * - D (dead node) holds L; H (survivor) holds M, W queues behind H on M (polling every `pollNs`);
 * - at 100 µs the recovery starts, its drain asking every µs; at 200 µs H releases and hands M to
 *   W, and the next drain round aborts W before W's next poll;
 * - after the recovery X takes M and holds it 100 µs; W asks for M again 10 µs later, reusing its
 *   queue node: it must wait for X.
 */
export async function queueHandedWaiterAbortScenario(protocol: ProtocolDefinition, options: ProtocolOptions) {
  const r = rig(protocol, options);
  const d = r.client(r.deadNode, 0);
  const [h, w, x] = r.survivors(1, 2, 3) as [ReturnType<typeof r.client>, ReturnType<typeof r.client>, ReturnType<typeof r.client>];
  const steps: string[] = [];
  let diedAtNs = 0;
  let recovery: QueueRecoveryRun | undefined;
  const played = await r.play(
    async () => {
      await d.acquire(L);
      diedAtNs = r.now();
      const held = await h.acquire(M);
      const wFirst = w.acquire(M).then(async (g) => {
        await w.release(g);
        return 'granted';
      }, (error: unknown) => (error as Error).name);
      await r.at(100 * US);
      const recovering = r.recover(h, 1 * US, false);
      await r.at(200 * US);
      await h.release(held);
      recovery = await recovering;
      steps.push(`W's first wait: ${await wFirst}`);
      const start = r.now();
      const xRun = (async () => {
        const g = await x.acquire(M);
        await r.at(start + 100 * US);
        steps.push('X releases M');
        await x.release(g);
      })();
      await r.at(start + 10 * US);
      const again = await w.acquire(M);
      steps.push('W got M');
      await w.release(again);
      await xRun;
    },
    d,
    () => diedAtNs,
  );
  return { ...played, steps, recovery };
}
