import type { LockId } from '@lockfabric/ports';
import type { AgentPool } from '../agent-pool.js';
import type { MachineOrders, ServerReport } from './recovery-state.js';

/** A client that can stop its lock operations and attempt timers while its machine is paused (S1–S2). */
export interface PausableRecoveryClient {
  recoveryPause?(): void;
  recoveryResume?(): void;
}

/** One surviving machine's part in S1 and S2, as the coordinator (or recoverInProcess) drives it. */
export interface MachineRecovery {
  /** S1, first half: clients hold still, the link's unacknowledged ACQUIREs are settled, the pool stops sending. */
  pauseForRecovery(): void;
  /** S1, second half: agents and clients as they stand now (nothing local changes them until S2). */
  recoveryReport(): ServerReport;
  /** S2: the pool installs its orders on a new link, then clients go on. */
  applyRecovery(orders: MachineOrders): void;
  /**
   * The recovery was abandoned before S2 (the coordinator stopped calling): clients go on so no
   * acquire waits past its timeout; the pool stays paused (nothing it sends leaves), so they end
   * with typed timeouts until a later recovery applies its orders.
   */
  releaseClients(): void;
  /** One lock's agents and client records now, without pausing anything (a stalled-queue suspicion's confirmation). */
  lockReport(lid: LockId): ServerReport;
}

const cache = new WeakMap<AgentPool, MachineRecovery>();

/**
 * The recovery steps of one machine, around the pool's own S1/S2 hooks. Two things the pool's
 * hooks alone get wrong (found live):
 * - Lock operations must stop from the pause to S2 (spec §7.2 "clients block"): S2's orders are
 *   computed from the report, so a release, a new local grant or an attempt timing out between
 *   the report and S2 would be undone by S2 — a holder left in the agent that nobody releases, or a
 *   woken request nobody waits for. Clients that implement {@link PausableRecoveryClient} hold
 *   their acquires, releases and attempt timers until S2 is applied.
 * - The pause replaces the link and drops its retransmission buffer with the callbacks of every
 *   unacknowledged packet. A client whose ACQUIRE was never acknowledged (it went to an agent on
 *   the machine that died) sends its abort only after that ACK, so its abort would never be sent:
 *   S2 queues the request, the attempt times out, and the agent later hands the lock to a request
 *   nobody waits for — the lock is never granted again. The pause settles those ACQUIREs first as
 *   recorded (S2 keeps every pending request as a holder or a waiter, so REACHED is true of them).
 */
export function machineRecovery(pool: AgentPool): MachineRecovery {
  const known = cache.get(pool);
  if (known) return known;
  const clients = (): PausableRecoveryClient[] => pool.recoveryClientList() as PausableRecoveryClient[];
  const made: MachineRecovery = {
    pauseForRecovery: () => {
      for (const c of clients()) c.recoveryPause?.();
      settleOldAcquires(pool);
      pool.pauseForRecovery();
    },
    recoveryReport: () => pool.recoveryReport(),
    applyRecovery: (orders) => {
      pool.applyRecovery(orders);
      for (const c of clients()) c.recoveryResume?.();
    },
    releaseClients: () => {
      for (const c of clients()) c.recoveryResume?.();
    },
    lockReport: (lid) => pool.lockReport(lid),
  };
  cache.set(pool, made);
  return made;
}

/** Acknowledges this machine's unacknowledged ACQUIREs of waiting tasks as recorded; returns how many. */
export function settleOldAcquires(pool: AgentPool): number {
  return pool.settleOutstandingAcquires();
}

/** A client that can be cut off when its machine is declared failed (RecoverableFissLockClient). */
export interface AbandonableClient {
  abandon?(reason: string): void;
}

const fenced = new WeakSet<AgentPool>();

/**
 * This machine was declared failed while it still runs (paused past detection, cut off): the rest
 * of the cluster has recovered without it (spec §7.1: its holds expired, its pending acquires
 * aborted). The pool stops — nothing it sends reaches the switch, nothing reaches it — and every
 * client is abandoned: a waiting acquire ends with LockAbortedError, later acquires fail at once
 * with it, and releasing a hold from before reports LeaseExpiredError (the hold ended when the
 * machine was declared failed). Returns the number of clients cut off; a second call does nothing.
 */
export function fenceMachine(pool: AgentPool, reason: string): number {
  if (fenced.has(pool)) return 0;
  fenced.add(pool);
  pool.failStop();
  const clients = pool.recoveryClientList() as AbandonableClient[];
  for (const c of clients) c.abandon?.(reason);
  return clients.length;
}

/** Whether {@link fenceMachine} cut this pool off: it takes no part in later recoveries. */
export function isMachineFenced(pool: AgentPool): boolean {
  return fenced.has(pool);
}
