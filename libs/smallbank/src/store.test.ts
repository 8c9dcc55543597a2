import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer } from '@lockfabric/testkit';
import type { RedisServerHandle } from '@lockfabric/testkit';
import { LockTimeoutError } from '@lockfabric/ports';
import type { SmallBankTxn } from '@lockfabric/workloads';
import { RedLockClient } from './redlock-client.js';
import { SmallBankStore } from './store.js';

// Against a real redis-server on a free port.
describe('SmallBankStore and RedLockClient on a real redis-server', () => {
  let redis: RedisServerHandle;
  let store: SmallBankStore;
  beforeAll(async () => {
    redis = await startRedisServer();
    store = await SmallBankStore.open(redis.url);
  });
  afterAll(async () => {
    await store?.close();
    await redis?.stop();
  });

  it('populates accounts, applies a transfer with its execution in between, reads every balance back', async () => {
    await store.populate(25_000, 100);
    let executed = 0;
    const transfer: SmallBankTxn = { type: 'TRANSFER', locks: [], transfer: { from: 24_999, to: 3, amount: 40 } };
    await store.run(transfer, async () => void executed++);
    await store.run({ type: 'BALANCE', account: 7, locks: [] } as SmallBankTxn, async () => void executed++);
    const balances = await store.balances(25_000);
    expect(executed).toBe(2);
    expect([balances[24_999], balances[3], balances[0]]).toEqual([60, 140, 100]);
    expect(balances.reduce((a, b) => a + b, 0)).toBe(25_000 * 100);
  });

  it('rejects a non-redis URL with a ConfigError', async () => {
    await expect(SmallBankStore.open('http://127.0.0.1:1')).rejects.toMatchObject({ code: 'CONFIG' });
  });

  it('RedLock excludes: a second client times out on a held account, then gets it after release', async () => {
    const a = new RedLockClient(store.redis);
    const b = new RedLockClient(store.redis);
    const grant = await a.acquire(11, 'exclusive');
    await expect(b.acquire(11, 'shared', { timeoutMs: 30 })).rejects.toBeInstanceOf(LockTimeoutError);
    await a.release(grant);
    const second = await b.acquire(11, 'exclusive', { timeoutMs: 1_000 });
    await b.release(second);
  });
});
