import { OptionReader } from '@lockfabric/locks-common';
import type { ProtocolOptions } from '@lockfabric/locks-common';
import type { AgentPlacement, FissPolicy } from './agent-pool.js';
import { MAX_RACKS } from '@lockfabric/ports';

export interface FissLockOptions {
  readonly policy: FissPolicy;
  /** `home` = FissLock-Local (§7.4): agents park at their lock's ParLock home instead of freeing there. */
  readonly placement: AgentPlacement;
  /** Retransmission timeout of sequenced packets (spec §12.15). */
  readonly rtoNs: number;
  /** Minimum gap between sequenced packets on one machine's link (keeps one link FIFO under sim jitter). */
  readonly pacingNs: number;
  /** Largest multiple of rtoNs the retransmission timeout backs off to after silent rounds (1 = fixed). */
  readonly rtoMaxBackoff: number;
  /** T_ACQ: an attempt without a GRANT by then is aborted and retried (lost switch GRANT, §5.2). */
  readonly attemptTimeoutNs: number;
  readonly starvePeriodNs: number;
  /** T_STUCK (spec §12.9): a lock stuck this long is reported for a per-lock repair; 0 = watchdog off. */
  readonly tStuckNs: number;
  /** First back-off of a packet bounced again for the same lock (spec §5.3 retry buffer); doubles up to rtoNs; 0 = none. */
  readonly bounceBackoffNs: number;
  /** Lock ids the switch decides; ids at or above it go to the ParLock fallback managers (§6.6). 0 = the decider's default capacity for the configured lock count. */
  readonly switchCapacity: number;
  /** Switches the lock ids are partitioned over (FissLock §5.4, `rackOfLock`); the run sets it from its topology. */
  readonly racks: number;
  /** `dense`: application lock ids are register indexes (the paper's microbenchmark); `mapped`: sparse ids are mapped by the id-map daemon (§6.5). */
  readonly lockIds: 'dense' | 'mapped';
  /** Compute node hosting the id-map daemon; -1 = the lowest-numbered compute node of the run. */
  readonly idMapNode: number;
  /** First wait for a daemon reply before the request is resent; doubles per attempt. */
  readonly idMapRetryNs: number;
  /** Requests sent for one lookup before the daemon counts as unreachable. */
  readonly idMapAttempts: number;
  /** Ids the daemon maps at most (dense and out-of-range together); later new ids are refused. */
  readonly idMapMaxEntries: number;
  readonly mutantNoDuplicateSuppression: boolean;
  /** Test-only mutant: every machine maps ids with a table of its own, so machines disagree on lids. */
  readonly mutantIdMapPerMachine: boolean;
  readonly mutantNoStarve: boolean;
  /** Test-only mutant for the switch program (read here so the run's options agree): no INCA_BOUND on ② grants. */
  readonly mutantNoIncaBound: boolean;
  /** Test-only mutant for the switch program (read here so the run's options agree): a bounced ② copy of a free lock is dropped without an ACK. */
  readonly mutantSilentStaleCopy: boolean;
  readonly mutantDupNeverGranted: boolean;
  readonly mutantTrustReRefusal: boolean;
  readonly mutantRecountDupGrant: boolean;
  readonly mutantCountForeignCopy: boolean;
  readonly mutantParkedModeChange: boolean;
}

/** Lids travel as uint32 (packets, messages): dense range plus overflow must stay below 2^32. */
export const MAX_ID_MAP_ENTRIES = 0xffff_ffff;

export const FISSLOCK_OPTION_HELP = {
  policy: 'read-preferring (default), starvation-prevention or write-preferring; must match the switch program',
  placement: 'migrate (default: FissLock, agents follow the holders) or home (FissLock-Local, FissLock §7.4: a lock\'s agent stays parked at its home node, lock mod n as ParLock, when the lock goes idle there)',
  rtoNs: 'retransmission timeout of sequenced packets in ns (default 200000)',
  rtoMaxBackoff: 'largest multiple of rtoNs the retransmission timeout doubles up to after rounds with no ACK, reset by any ACK (default 1: fixed; the switch benchmark uses 8)',
  pacingNs: 'minimum ns between two sequenced packets of one machine (default 250: one link stays FIFO under the simulator jitter)',
  attemptTimeoutNs: 'T_ACQ in ns: abort-release and retry an attempt with no GRANT by then (default 10000000)',
  starvePeriodNs: 'T_STARVE in ns (default 100000)',
  tStuckNs: 'T_STUCK in ns (spec §12.9): a lock whose agent stays without holders after a refusal, holds a task nobody on its machine knows, or whose packets keep bouncing this long is reported for a per-lock repair (default 100000000 = 10 T_ACQ; 0 = watchdog off)',
  switchCapacity: 'lock ids decided on the switch; higher ids are served by ParLock-style managers at the lock\'s home (default 0 = min(lock count, 1680000), the decider\'s capacity); must match the switch program\'s lockCount',
  racks: 'switches the lock ids are partitioned over, one per rack (FissLock §5.4); set by the run from --racks, default 1',
  bounceBackoffNs: 'first delay in ns before re-sending a packet bounced again for the same lock; doubles up to rtoNs (default 5000, 0 = bounce at once)',
  lockIds: 'dense (default: application lock ids are register indexes) or mapped (sparse ids get indexes first come first served from the id-map daemon; clients cache them; ids past switchCapacity fall back to ParLock)',
  idMapNode: 'compute node hosting the id-map daemon with lockIds=mapped (default: the lowest-numbered compute node of the run)',
  idMapRetryNs: 'first wait in ns for an id-map reply before the request is resent; doubles per attempt (default 1000000)',
  idMapAttempts: 'id-map requests per lookup before the acquire fails with LockIdMapError (default 10)',
  idMapMaxEntries: 'ids the daemon maps at most; later new ids are refused with LockIdMapError (default 4194304)',
  mutantIdMapPerMachine: 'test-only: every machine maps lock ids with its own table (machines disagree on register indexes)',
  mutantNoDuplicateSuppression: 'test-only: agent pools process duplicated packets again',
  mutantNoIncaBound: 'test-only: the decider grants ② past its inca bound (127 per lifetime), so its 8-bit incarnation may wrap against the agent\'s',
  mutantSilentStaleCopy: 'test-only: the decider drops a bounced ② copy of a free lock without an ACK, so its bouncer resends it for ever',
  mutantDupNeverGranted: 'test-only: a duplicate ACQUIRE is always queued, even when its first copy was certainly granted ② in the agent\'s lifetime',
  mutantTrustReRefusal: 'test-only: an agent restored by a repeated refusal keeps its lifetime anchors even when the lock may have moved on',
  mutantRecountDupGrant: 'test-only: a duplicate ACQUIRE whose ② grant an agent already counted (its copy, or written off with its RELEASE) may be counted again',
  mutantCountForeignCopy: 'test-only: a ② GRANTED copy is counted by any shared agent it reaches, not only at the home machine it names',
  mutantParkedModeChange: 'test-only, with placement=home: a parked agent grants a local request of the other mode without telling the switch',
  mutantNoStarve: 'test-only: agents never tell the switch that a writer waits (no STARVE), whatever the policy',
};

export function readFissLockOptions(options?: ProtocolOptions): FissLockOptions {
  const reader = new OptionReader('fisslock', options);
  const parsed: FissLockOptions = {
    policy: reader.choice('policy', ['read-preferring', 'starvation-prevention', 'write-preferring'] as const, 'read-preferring'),
    placement: reader.choice('placement', ['migrate', 'home'] as const, 'migrate'),
    rtoNs: reader.number('rtoNs', 200_000, { min: 1 }),
    rtoMaxBackoff: reader.number('rtoMaxBackoff', 1, { min: 1, integer: true }),
    pacingNs: reader.number('pacingNs', 250, { min: 0 }),
    attemptTimeoutNs: reader.number('attemptTimeoutNs', 10_000_000, { min: 1 }),
    starvePeriodNs: reader.number('starvePeriodNs', 100_000, { min: 1 }),
    tStuckNs: reader.number('tStuckNs', 100_000_000, { min: 0 }),
    bounceBackoffNs: reader.number('bounceBackoffNs', 5_000, { min: 0 }),
    switchCapacity: reader.number('switchCapacity', 0, { min: 0 }),
    racks: reader.number('racks', 1, { min: 1, max: MAX_RACKS, integer: true }),
    lockIds: reader.choice('lockIds', ['dense', 'mapped'] as const, 'dense'),
    idMapNode: reader.number('idMapNode', -1, { min: 0, integer: true }),
    idMapRetryNs: reader.number('idMapRetryNs', 1_000_000, { min: 1 }),
    idMapAttempts: reader.number('idMapAttempts', 10, { min: 1, integer: true }),
    idMapMaxEntries: reader.number('idMapMaxEntries', 4_194_304, { min: 1, max: MAX_ID_MAP_ENTRIES, integer: true }),
    mutantNoDuplicateSuppression: reader.boolean('mutantNoDuplicateSuppression', false),
    mutantIdMapPerMachine: reader.boolean('mutantIdMapPerMachine', false),
    mutantNoStarve: reader.boolean('mutantNoStarve', false),
    mutantNoIncaBound: reader.boolean('mutantNoIncaBound', false),
    mutantSilentStaleCopy: reader.boolean('mutantSilentStaleCopy', false),
    mutantDupNeverGranted: reader.boolean('mutantDupNeverGranted', false),
    mutantTrustReRefusal: reader.boolean('mutantTrustReRefusal', false),
    mutantRecountDupGrant: reader.boolean('mutantRecountDupGrant', false),
    mutantCountForeignCopy: reader.boolean('mutantCountForeignCopy', false),
    mutantParkedModeChange: reader.boolean('mutantParkedModeChange', false),
  };
  reader.done();
  return parsed;
}
