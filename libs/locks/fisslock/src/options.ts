import { OptionReader } from '@lockfabric/locks-common';
import type { ProtocolOptions } from '@lockfabric/locks-common';
import type { FissPolicy } from './agent-pool.js';

export interface FissLockOptions {
  readonly policy: FissPolicy;
  /** Retransmission timeout of sequenced packets (spec §12.15). */
  readonly rtoNs: number;
  /** Minimum gap between sequenced packets on one machine's link (keeps one link FIFO under sim jitter). */
  readonly pacingNs: number;
  /** T_ACQ: an attempt without a GRANT by then is aborted and retried (lost switch GRANT, §5.2). */
  readonly attemptTimeoutNs: number;
  readonly starvePeriodNs: number;
  readonly mutantNoDuplicateSuppression: boolean;
}

export const FISSLOCK_OPTION_HELP = {
  policy: 'read-preferring (default), starvation-prevention or write-preferring; must match the switch program',
  rtoNs: 'retransmission timeout of sequenced packets in ns (default 200000)',
  pacingNs: 'minimum ns between two sequenced packets of one machine (default 250: one link stays FIFO under the simulator jitter)',
  attemptTimeoutNs: 'T_ACQ in ns: abort-release and retry an attempt with no GRANT by then (default 10000000)',
  starvePeriodNs: 'T_STARVE in ns (default 100000)',
  mutantNoDuplicateSuppression: 'test-only: agent pools process duplicated packets again',
};

export function readFissLockOptions(options?: ProtocolOptions): FissLockOptions {
  const reader = new OptionReader('fisslock', options);
  const parsed: FissLockOptions = {
    policy: reader.choice('policy', ['read-preferring', 'starvation-prevention', 'write-preferring'] as const, 'read-preferring'),
    rtoNs: reader.number('rtoNs', 200_000, { min: 1 }),
    pacingNs: reader.number('pacingNs', 250, { min: 0 }),
    attemptTimeoutNs: reader.number('attemptTimeoutNs', 10_000_000, { min: 1 }),
    starvePeriodNs: reader.number('starvePeriodNs', 100_000, { min: 1 }),
    mutantNoDuplicateSuppression: reader.boolean('mutantNoDuplicateSuppression', false),
  };
  reader.done();
  return parsed;
}
