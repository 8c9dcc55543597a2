import { describe, expect, it } from 'vitest';
import { readWorkload } from '../cli/args.js';
import { readTxnWorkload } from './txn-bench.js';
import { withRedis } from './smallbank-bench.js';
import { smallBankProblems } from './smallbank-flags.js';

const DEFAULTS = { clients: 8, locks: 1000, readRatio: 0, distribution: 'uniform', operations: 10_000 };

async function read(values: Record<string, unknown>, substrate = 'live') {
  const { spec, reader } = readWorkload(values, DEFAULTS);
  const out = await readTxnWorkload(values, reader, spec, substrate);
  return { out, problems: reader.problems };
}

describe('bench --workload smallbank', () => {
  it('one lock per account, 1 M accounts by default, the realtime timeout, no execution time', async () => {
    const { out, problems } = await read({ workload: 'smallbank' });
    expect(problems).toEqual([]);
    expect(out.locks).toBe(1_000_000);
    expect(out.timeoutMs).toBe(2_000);
    expect(out.transactions).toMatchObject({ executeNs: 0, workload: { kind: 'smallbank', accounts: 1_000_000 } });
    const small = await read({ workload: 'smallbank', accounts: '300', redis: 'redis://10.0.0.2:6380', 'mutant-skip-lock': true });
    expect(small.out.locks).toBe(300);
    expect(small.out.transactions?.workload).toEqual({ kind: 'smallbank', accounts: 300, redisUrl: 'redis://10.0.0.2:6380', mutantSkipLock: true });
    expect(withRedis(small.out, 'redis://127.0.0.1:1').transactions?.workload).toMatchObject({ redisUrl: 'redis://127.0.0.1:1', accounts: 300 });
  });

  it('lists every bad flag', async () => {
    expect((await read({ workload: 'smallbank', accounts: '1', redis: 'localhost:6379', locks: '5' })).problems).toEqual([
      '--accounts: expected an integer ≥ 2 and ≤ 4294967295, got "1"',
      '--redis: expected redis://HOST:PORT, got "localhost:6379"',
      '--locks applies to --workload micro; smallbank defines its own locks and modes',
    ]);
    expect((await read({ workload: 'tatp', accounts: '5', 'mutant-skip-lock': true })).problems).toEqual(['--accounts applies to --workload smallbank']); // --mutant-skip-lock is reported by app-bench (objectstore or smallbank)
  });

  it('SmallBank runs on live only; redlock runs SmallBank on live only', async () => {
    const smallbank = (await read({ workload: 'smallbank' })).out;
    const micro = (await read({})).out;
    expect(smallBankProblems(['caslock', 'redlock'], 'live', smallbank)).toEqual([]);
    expect(smallBankProblems(['caslock'], 'sim', smallbank)).toEqual(['--workload smallbank runs on --substrate live (balances live in a real redis-server), not sim']);
    expect(smallBankProblems(['redlock'], 'embedded', micro)).toEqual([
      '--protocol redlock runs only --workload smallbank (RedLock is a Redis lock, not an RDMA or switch protocol)',
      '--protocol redlock runs on --substrate live only, not embedded',
    ]);
  });
});
