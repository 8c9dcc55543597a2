import { OptionReader } from '@lockfabric/locks-common';
import type { ProtocolOptions } from '@lockfabric/locks-common';

export interface AlockOptions {
  /** Critical-section entries per local tenure (spec A7: the entrant plus budget-1 hand-offs), ≥ 1. */
  readonly localBudget: number;
  /** The same for the remote cohort. */
  readonly remoteBudget: number;
  /** Pause between polls of a word in the poller's own memory (own descriptor; a local Peterson wait). */
  readonly spinNs: number;
  /** Pause between the remote cohort head's polls of T_L and victim (spec A10). */
  readonly remoteSpinNs: number;
  /** `separate`: rRead T_L, then victim if needed (spec A9); `combined`: one 24-byte READ of the entry. */
  readonly petersonRead: 'separate' | 'combined';
  /** Remote-class peers on the same node reach each other's descriptors with CPU stores (spec A11). */
  readonly sameNodeStores: boolean;
  /**
   * How long a release waits for a successor that swapped itself into the cohort tail to link in,
   * before it takes that successor for dead and clears the tail (see `AlockClient.passOn`).
   */
  readonly releaseLinkTimeoutNs: number;
  /** Test-only: the original unbounded wait for the successor's link (hangs if it died). */
  readonly mutantUnboundedReleaseWait: boolean;
  /** Test-only: a release CAS of the cohort tail that failed `unreachable` is not read back. */
  readonly mutantNoReadBack: boolean;
  /** Test-only: a descriptor whose enqueue CAS failed is reused under the same link generation. */
  readonly mutantReuseAfterFailedSwap: boolean;
  /** Test-only: reuse a descriptor freed by a recovery abort without clearing its budget and `next` words. */
  readonly mutantSkipAbortClear: boolean;
  /** M0: the naive lock — local CPU CAS and remote CAS on one shared word (not mutually exclusive). */
  readonly mutantNaiveLocalCas: boolean;
  /** M1: cohort leaders skip the Peterson entry. */
  readonly mutantSkipPeterson: boolean;
  /** M2: a leader writes victim before enqueueing (flag after victim). */
  readonly mutantVictimFirst: boolean;
  /** M4: a process handed budget 0 enters with a fresh budget without re-arbitrating. */
  readonly mutantSkipReacquire: boolean;
  /** M8: a local releaser with no successor clears T_L with a plain store instead of a CAS. */
  readonly mutantPlainLocalRelease: boolean;
  /** Test-only: poll a closed recovery gate or a full descriptor pool every spinNs (the old, slow wait). */
  readonly mutantPollGate: boolean;
}

/**
 * 2 ms: the link is one WRITE (or CPU store) issued right after the successor's swap returns, a few
 * µs on `sim`; only a dead or stopped successor takes this long.
 */
/** 50 ms: a real-time (embedded) scheduler under load must not cut a live successor; sim tests set less. */
export const DEFAULT_RELEASE_LINK_TIMEOUT_NS = 50_000_000;

export const ALOCK_OPTION_HELP: Readonly<Record<string, string>> = {
  localBudget: 'CS entries per local tenure before the cohort re-arbitrates with remote processes (default 5, ≥ 1)',
  remoteBudget: 'CS entries per remote tenure before the cohort re-arbitrates with local processes (default 5, ≥ 1)',
  spinNs: 'pause between polls of memory on the poller’s own node, in ns (default 200)',
  remoteSpinNs: 'pause between the remote head’s READ polls in the Peterson wait, in ns (default 1000)',
  petersonRead: 'separate (default: READ T_L, then victim) or combined (one 24-byte READ per poll)',
  sameNodeStores: 'true: remote-class peers on one node write each other’s descriptors with CPU stores (default false: WRITE verbs)',
  releaseLinkTimeoutNs: `ns a release waits for an enqueued successor to link in before clearing the cohort tail (default ${DEFAULT_RELEASE_LINK_TIMEOUT_NS})`,
  mutantUnboundedReleaseWait: 'test-only: wait for the successor link forever (hangs if the successor died)',
  mutantNoReadBack: 'test-only: do not read the cohort tail back after a release CAS failed unreachable (leaks locks on lost completions)',
  mutantReuseAfterFailedSwap: 'test-only: reuse a descriptor whose enqueue CAS failed under the same link generation (broken on purpose)',
  mutantSkipAbortClear: 'test-only: reuse a descriptor a recovery aborted without clearing it (broken on purpose)',
  mutantNaiveLocalCas: 'test-only: the naive lock mixing local CPU CAS and remote CAS on one word (broken on purpose)',
  mutantSkipPeterson: 'test-only: leaders skip the Peterson entry (broken on purpose)',
  mutantVictimFirst: 'test-only: leaders write victim before enqueueing (broken on purpose)',
  mutantSkipReacquire: 'test-only: budget 0 does not re-arbitrate (unfair on purpose)',
  mutantPlainLocalRelease: 'test-only: local release clears T_L with a store instead of CAS (loses waiters on purpose)',
  mutantPollGate: 'test-only: poll a closed recovery gate or a full descriptor pool every spinNs instead of sleeping until it opens (slow on sim)',
};

export function readAlockOptions(options?: ProtocolOptions): AlockOptions {
  const reader = new OptionReader('alock', options);
  const budget = { min: 1, max: 1_000_000, integer: true };
  const parsed: AlockOptions = {
    localBudget: reader.number('localBudget', 5, budget),
    remoteBudget: reader.number('remoteBudget', 5, budget),
    spinNs: reader.number('spinNs', 200, { min: 1 }),
    remoteSpinNs: reader.number('remoteSpinNs', 1_000, { min: 1 }),
    petersonRead: reader.choice('petersonRead', ['separate', 'combined'] as const, 'separate'),
    sameNodeStores: reader.boolean('sameNodeStores', false),
    releaseLinkTimeoutNs: reader.number('releaseLinkTimeoutNs', DEFAULT_RELEASE_LINK_TIMEOUT_NS, { min: 1 }),
    mutantUnboundedReleaseWait: reader.boolean('mutantUnboundedReleaseWait', false),
    mutantNoReadBack: reader.boolean('mutantNoReadBack', false),
    mutantReuseAfterFailedSwap: reader.boolean('mutantReuseAfterFailedSwap', false),
    mutantSkipAbortClear: reader.boolean('mutantSkipAbortClear', false),
    mutantNaiveLocalCas: reader.boolean('mutantNaiveLocalCas', false),
    mutantSkipPeterson: reader.boolean('mutantSkipPeterson', false),
    mutantVictimFirst: reader.boolean('mutantVictimFirst', false),
    mutantSkipReacquire: reader.boolean('mutantSkipReacquire', false),
    mutantPlainLocalRelease: reader.boolean('mutantPlainLocalRelease', false),
    mutantPollGate: reader.boolean('mutantPollGate', false),
  };
  reader.done();
  return parsed;
}
