import type { ProtocolOptions } from '@lockfabric/locks-common';
import { lockAddress, noopTrace } from '@lockfabric/ports';
import type { AcquireOptions, LockMode, Trace } from '@lockfabric/ports';
import type { NodeMemory } from '@lockfabric/fabric';
import { createSimCluster } from '@lockfabric/sim';
import { ShiftLockClient, ShiftLockRecoveryServer, decodeEntry, readShiftLockOptions, shiftlock } from '../../src/index.js';
import type { LockEntry, ShiftLockGrant } from '../../src/index.js';

/** An acquire in flight, observable from a scripted test. */
export interface Pending {
  readonly promise: Promise<ShiftLockGrant>;
  grant?: ShiftLockGrant;
  error?: unknown;
  readonly settled: () => boolean;
}

/**
 * A deterministic sim cluster (one memory node, two compute nodes, no jitter) for scripted
 * scenarios: clients are created on demand, time advances only when the test says so.
 */
export function scripted(options: ProtocolOptions = {}, setup: { lockCount?: number; trace?: Trace; recoveryServer?: boolean; jitterNs?: number } = {}) {
  const { cluster, scheduler } = createSimCluster({ seed: 1, lockCount: setup.lockCount ?? 4, entryBytes: shiftlock.entryBytes, jitterNs: setup.jitterNs ?? 0, trace: setup.trace ?? noopTrace });
  const memoryNode = cluster.node(cluster.memoryNodeIds[0]!);
  const memory: NodeMemory = memoryNode.memory;
  const parsed = readShiftLockOptions(options);
  const stopServer = new AbortController();
  const server = setup.recoveryServer
    ? new ShiftLockRecoveryServer(cluster.clientPorts({ node: cluster.memoryNodeIds[0]!, client: parsed.recoveryClient }), options)
    : undefined;
  const serving = server?.serve(stopServer.signal);

  const client = (index: number, overrides: ProtocolOptions = {}): ShiftLockClient =>
    new ShiftLockClient(
      cluster.clientPorts({ node: cluster.computeNodeIds[index % cluster.computeNodeIds.length]!, client: index }),
      readShiftLockOptions({ ...options, ...overrides }),
    );

  const acquire = (who: ShiftLockClient, lock: number, mode: LockMode, acquireOptions?: AcquireOptions): Pending => {
    let settled = false;
    const pending: Pending = {
      promise: who.acquire(lock, mode, acquireOptions),
      settled: () => settled,
    };
    pending.promise.then(
      (grant) => {
        settled = true;
        pending.grant = grant;
      },
      (error: unknown) => {
        settled = true;
        pending.error = error;
      },
    );
    return pending;
  };

  /**
   * Runs until `done()` holds, for at most `limitNs` of virtual time. Continuations of the test's own
   * calls may not have posted their first verb yet, so each round first yields one macrotask turn.
   */
  const until = async (done: () => boolean, limitNs = 1_000_000): Promise<boolean> => {
    const endNs = scheduler.nowNs() + limitNs;
    for (let idleRounds = 0; !done() && idleRounds < 3; ) {
      await new Promise((resolve) => setImmediate(resolve));
      const outcome = await scheduler.run({ untilNs: endNs, stop: done });
      if (outcome.reason === 'until') break;
      idleRounds = outcome.reason === 'idle' ? idleRounds + 1 : 0;
    }
    return done();
  };
  /** Runs the simulation for `ns` of virtual time (less if it goes idle). */
  const advance = async (ns: number): Promise<void> => {
    await until(() => false, ns);
  };
  /** Drives the simulation until `promise` settles, then returns its outcome. */
  const run = async <T>(promise: Promise<T>, limitNs = 10_000_000): Promise<T> => {
    let settled = false;
    promise.then(
      () => (settled = true),
      () => (settled = true),
    );
    await until(() => settled, limitNs);
    if (!settled) throw new Error(`still pending after ${limitNs} ns of virtual time`);
    return promise;
  };

  /**
   * Lets every acquire in `work` finish, releasing each grant as soon as it is held (so no holder
   * outlives its lease because of the test); resolves true when all are granted and released.
   */
  const drive = async (work: { pending: Pending; client: ShiftLockClient }[], limitNs = 10_000_000): Promise<boolean> => {
    const released = new Set<Pending>();
    const endNs = scheduler.nowNs() + limitNs;
    while (released.size < work.length && scheduler.nowNs() < endNs) {
      const ready = () => work.some((w) => w.pending.grant && !released.has(w.pending));
      await until(() => ready() || work.every((w) => w.pending.settled()), endNs - scheduler.nowNs());
      const next = work.find((w) => w.pending.grant && !released.has(w.pending));
      if (!next) break;
      released.add(next.pending);
      await run(next.client.release(next.pending.grant!));
    }
    return released.size === work.length;
  };

  const entry = (lock: number): LockEntry => {
    const addr = lockAddress(cluster.layout, lock);
    return decodeEntry(memory.cpuLoad(addr) | (memory.cpuLoad({ ...addr, offset: addr.offset + 8 }) << 64n));
  };
  const verbs = (): Record<string, number> =>
    Object.fromEntries(Object.entries(memoryNode.nic.counters.snapshot().byOpcode as Record<string, number>).filter(([, n]) => n > 0));
  const messages = (): number => cluster.mailboxes.delivered;
  const stop = async (): Promise<void> => {
    stopServer.abort();
    await serving;
  };

  return { cluster, scheduler, memory, server, client, acquire, advance, until, run, drive, entry, verbs, messages, stop };
}

/** Verb counts added between two snapshots. */
export function delta(after: Record<string, number>, before: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(after).map(([op, n]) => [op, n - (before[op] ?? 0)]).filter(([, n]) => n !== 0));
}
