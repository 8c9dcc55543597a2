import type { HistoryEvent } from './history.js';

/** The error name a lease-based protocol's release reports when the grant's lease ran out first. */
export const LEASE_EXPIRED = 'LeaseExpiredError';

/**
 * Lease safety as the exclusion checker can see it. A holder that outlived its lease (it was
 * paused, or partitioned) no longer held the lock after the lease: its release must fail with
 * LeaseExpiredError, and others may take the lock meanwhile. This moves the release `invoke` of
 * each such hold back to `acquire ok + protectedNs`, so the checker judges only the part of the
 * hold the protocol guaranteed. A late release that *succeeded* is left as recorded: its full hold
 * counts, and any overlap with a later holder is a violation — which is what a protocol that fails
 * to fence late holders produces.
 *
 * `protectedNs` is how much of its lease a holder is sure to have left when it records `ok`. The
 * history does not say when a lease started, so it must be a lower bound: a DSLR lease starts
 * before the grant is observed, and a waiter paused across its grant sees it with the lease
 * already over (DSLR's answer is `checkLease` before commit, spec §8.2), so with pauses it is 0.
 *
 * Events keep their order except the moved invokes; `checkHistory` orders by time.
 */
export function clipExpiredLeases(history: readonly HistoryEvent[], protectedNs: number): HistoryEvent[] {
  const okAt = new Map<string, number>();
  const pendingRelease = new Map<string, number>();
  const out = history.map((event) => ({ ...event }));
  const key = (e: HistoryEvent) => `${e.client}\u0000${e.lock}`;
  for (let i = 0; i < out.length; i++) {
    const event = out[i] as HistoryEvent;
    if (event.op === 'acquire' && event.phase === 'ok') okAt.set(key(event), event.timeNs);
    else if (event.op === 'release' && event.phase === 'invoke') pendingRelease.set(key(event), i);
    else if (event.op === 'release' && event.phase === 'fail' && event.error === LEASE_EXPIRED) {
      const invokeIndex = pendingRelease.get(key(event));
      const grantedNs = okAt.get(key(event));
      const invoke = invokeIndex === undefined ? undefined : out[invokeIndex];
      if (invoke && grantedNs !== undefined) out[invokeIndex as number] = { ...invoke, timeNs: Math.min(invoke.timeNs, grantedNs + protectedNs) };
    }
  }
  return out;
}
