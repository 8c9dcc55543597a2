import { Redis } from 'ioredis';
import { ConfigError } from '@lockfabric/ports';
import type { SmallBankTxn, TxnData, TxnTemplate } from '@lockfabric/workloads';

/** All balances sit in one Redis hash, account id → whole cents. */
export const BALANCES_KEY = 'lockfabric:smallbank:balances';
/** Fields per HSET/HMGET when filling or reading the table (bounds one command's size). */
const CHUNK = 10_000;

/**
 * Opens a Redis connection for SmallBank. Commands fail fast while Redis is down (no offline
 * queue, bounded retries): a transaction must not wait unboundedly on a dead store.
 */
export async function connectRedis(url: string): Promise<Redis> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigError([`redis URL ${JSON.stringify(url)} is not a URL (expected redis://HOST:PORT)`]);
  }
  if (parsed.protocol !== 'redis:') throw new ConfigError([`redis URL ${JSON.stringify(url)} must start with redis://`]);
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 2, enableOfflineQueue: false, connectTimeout: 5_000, retryStrategy: (times) => (times > 5 ? null : 100 * times) });
  // ioredis reports connection errors as events as well as rejections; the rejection is what we act on.
  redis.on('error', () => undefined);
  await redis.connect();
  return redis;
}

/**
 * SmallBank's balances in Redis and the data verbs of its transactions. One round trip per read
 * and per write: a balance check is one HGET; a transfer reads both accounts with one HMGET,
 * executes, and writes both with one HSET (atomic in Redis, so a transfer is never half-written).
 */
export class SmallBankStore implements TxnData {
  constructor(readonly redis: Redis) {}

  static async open(url: string): Promise<SmallBankStore> {
    return new SmallBankStore(await connectRedis(url));
  }

  /** Replaces the table with `accounts` accounts at `initial` each. */
  async populate(accounts: number, initial: number): Promise<void> {
    await this.redis.del(BALANCES_KEY);
    for (let start = 0; start < accounts; start += CHUNK * 10) {
      const pipeline = this.redis.pipeline();
      for (let lo = start; lo < Math.min(accounts, start + CHUNK * 10); lo += CHUNK) {
        const fields: (string | number)[] = [];
        for (let a = lo; a < Math.min(accounts, lo + CHUNK); a++) fields.push(a, initial);
        pipeline.hset(BALANCES_KEY, ...fields);
      }
      for (const [error] of (await pipeline.exec()) ?? []) if (error) throw error;
    }
  }

  async run(template: TxnTemplate, execute: () => Promise<void>): Promise<void> {
    const t = template as SmallBankTxn;
    if (t.transfer) {
      const { from, to, amount } = t.transfer;
      const [a, b] = await this.redis.hmget(BALANCES_KEY, String(from), String(to));
      await execute();
      await this.redis.hset(BALANCES_KEY, from, balanceOf(a ?? null, from) - amount, to, balanceOf(b ?? null, to) + amount);
    } else if (t.account !== undefined) {
      balanceOf(await this.redis.hget(BALANCES_KEY, String(t.account)), t.account);
      await execute();
    } else throw new ConfigError([`transaction type ${t.type} is not a SmallBank transaction`]);
  }

  /** Every balance, index = account; NaN where an account is missing or not a number. */
  async balances(accounts: number): Promise<Float64Array> {
    const out = new Float64Array(accounts);
    for (let start = 0; start < accounts; start += CHUNK * 10) {
      const pipeline = this.redis.pipeline();
      const end = Math.min(accounts, start + CHUNK * 10);
      for (let lo = start; lo < end; lo += CHUNK) pipeline.hmget(BALANCES_KEY, ...Array.from({ length: Math.min(end, lo + CHUNK) - lo }, (_, i) => String(lo + i)));
      let at = start;
      for (const [error, values] of (await pipeline.exec()) ?? []) {
        if (error) throw error;
        for (const v of values as (string | null)[]) out[at++] = v === null ? Number.NaN : Number(v);
      }
    }
    return out;
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}

function balanceOf(value: string | null, account: number): number {
  const n = value === null ? Number.NaN : Number(value);
  if (!Number.isSafeInteger(n)) throw new ConfigError([`SmallBank account ${account} has no balance in Redis (was the table populated?)`]);
  return n;
}
