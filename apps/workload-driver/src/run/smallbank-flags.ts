// SmallBank's flags and configuration checks, apart from the runner so that reading them loads no Redis client.
import { SMALLBANK_DEFAULT_ACCOUNTS } from '@lockfabric/workloads';
import type { SmallBankWorkloadSpec, WorkloadSpec } from '@lockfabric/workloads';
import { REDLOCK_PROTOCOL_ID } from '@lockfabric/smallbank/protocol-id';
import type { FlagReader, Options } from '../cli/args.js';

/** Flags of `--workload smallbank` (SmallBank over Redis; ShiftLock Fig. 11). */
export const SMALLBANK_FLAGS: Options = {
  accounts: { type: 'string' },
  redis: { type: 'string' },
  'mutant-skip-lock': { type: 'boolean' },
};

/** The protocol id that runs SmallBank with RedLock over Redis instead of a LockFabric protocol. */
export const REDLOCK = REDLOCK_PROTOCOL_ID;

/** `--accounts`, `--redis`, `--mutant-skip-lock`; problems go to the reader (exit 2). */
export function readSmallBankWorkload(values: Record<string, unknown>, reader: FlagReader, isSmallBank: boolean): SmallBankWorkloadSpec | undefined {
  if (!isSmallBank) {
    // --mutant-skip-lock is the object store's too (app-bench.ts), which reports it there
    for (const flag of Object.keys(SMALLBANK_FLAGS)) if (values[flag] !== undefined && flag !== 'mutant-skip-lock') reader.problems.push(`--${flag} applies to --workload smallbank`);
    return undefined;
  }
  const accounts = reader.number('accounts', SMALLBANK_DEFAULT_ACCOUNTS, { integer: true, min: 2, max: 0xffff_ffff });
  const redis = values['redis'];
  if (redis !== undefined && (typeof redis !== 'string' || !/^redis:\/\/[^/\s]+(\/\d*)?$/.test(redis))) reader.problems.push(`--redis: expected redis://HOST:PORT, got ${JSON.stringify(redis)}`);
  return { kind: 'smallbank', accounts, ...(typeof redis === 'string' ? { redisUrl: redis } : {}), ...(values['mutant-skip-lock'] === true ? { mutantSkipLock: true } : {}) };
}

/**
 * Every problem with running these protocols on this substrate under this workload: SmallBank
 * keeps balances in a real Redis, so it runs on live only; RedLock is a Redis lock, not an RDMA
 * or switch protocol, so it runs SmallBank and nothing else.
 */
export function smallBankProblems(protocols: readonly string[], substrate: string, spec: WorkloadSpec): string[] {
  const problems: string[] = [];
  const smallbank = spec.transactions?.workload.kind === 'smallbank';
  if (smallbank && substrate !== 'live') problems.push(`--workload smallbank runs on --substrate live (balances live in a real redis-server), not ${substrate}`);
  if (protocols.includes(REDLOCK)) {
    if (!smallbank) problems.push('--protocol redlock runs only --workload smallbank (RedLock is a Redis lock, not an RDMA or switch protocol)');
    if (substrate !== 'live') problems.push(`--protocol redlock runs on --substrate live only, not ${substrate}`);
  }
  return problems;
}
