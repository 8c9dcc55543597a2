import { FabricAccessError } from '@lockfabric/ports';
import type { Clock, RemoteAddr, Verbs } from '@lockfabric/ports';
import { setImmediate as nextMacrotask } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { WordReconciler, isUncertain } from './word-reconciler.js';

const ADDR: RemoteAddr = { node: 9, region: 0, rkey: 1, offset: 16 };
const MINE = 7n;

/** A clock whose sleeps end at once, counted, and a word behind READ and CAS scripted per call. */
function world(reads: (n: number) => bigint | Error, casFails = 0) {
  const log: string[] = [];
  let word = 0n;
  let casCalls = 0;
  const clock: Clock = { nowNs: () => 0, sleep: async () => void log.push('sleep') };
  const verbs = {
    read: async () => {
      const n = log.filter((e) => e === 'read').length;
      log.push('read');
      const r = reads(n);
      if (r instanceof Error) throw r;
      word = r;
      const bytes = new Uint8Array(8);
      new DataView(bytes.buffer).setBigUint64(0, r, true);
      return bytes;
    },
    cas: async (_addr: RemoteAddr, compare: bigint, swap: bigint) => {
      log.push(`cas ${compare}->${swap}`);
      if (casCalls++ < casFails) throw new FabricAccessError('unreachable', 'scripted');
      const old = word;
      if (old === compare) word = swap;
      return old;
    },
  } as unknown as Verbs;
  return { log, verbs, clock, word: () => word };
}

const owned = { addr: ADDR, lock: 2, mine: (w: bigint) => w === MINE, without: () => 0n };

async function settle(r: WordReconciler): Promise<void> {
  for (let i = 0; i < 10_000 && r.pending > 0; i++) await nextMacrotask();
  expect(r.pending).toBe(0);
}

describe('WordReconciler', () => {
  it('reads past uncertain failures, then gives up its own hold with one CAS', async () => {
    const w = world((n) => (n < 2 ? new FabricAccessError('unreachable', 'link down') : MINE));
    const r = new WordReconciler(w.verbs, w.clock);
    r.reconcile(owned);
    await settle(r);
    expect(w.log.filter((e) => e !== 'sleep')).toEqual(['read', 'read', 'read', 'cas 7->0']);
    expect(w.word()).toBe(0n);
  });

  it('leaves a word that is not its own alone, and stops on a failure that is not uncertain', async () => {
    const other = world(() => 5n);
    const r1 = new WordReconciler(other.verbs, other.clock);
    r1.reconcile(owned);
    await settle(r1);
    expect(other.log.filter((e) => e !== 'sleep')).toEqual(['read']);
    const refused = world(() => new FabricAccessError('bad-rkey', 'no such region'));
    const r2 = new WordReconciler(refused.verbs, refused.clock);
    r2.reconcile(owned);
    await settle(r2);
    expect(refused.log.filter((e) => e === 'read')).toHaveLength(1);
  });

  it('a lost CAS is followed by another read, not taken for done', async () => {
    const w = world(() => MINE, 1);
    const r = new WordReconciler(w.verbs, w.clock);
    r.reconcile(owned);
    await settle(r);
    expect(w.log.filter((e) => e !== 'sleep')).toEqual(['read', 'cas 7->0', 'read', 'cas 7->0']);
  });

  it('gives up after `attempts` reads when the node never answers again', async () => {
    const w = world(() => new FabricAccessError('unreachable', 'gone'));
    const r = new WordReconciler(w.verbs, w.clock, { firstWaitNs: 1, maxWaitNs: 4, attempts: 17 });
    r.reconcile(owned);
    await settle(r);
    expect(w.log.filter((e) => e === 'read')).toHaveLength(17);
  });

  it('takeOver before the first read stops the job: no verb at all', async () => {
    const w = world(() => MINE);
    const r = new WordReconciler(w.verbs, w.clock);
    r.reconcile(owned);
    expect(r.pending).toBe(1);
    await r.takeOver(ADDR);
    expect(r.takeOver({ ...ADDR, offset: 24 })).toBeUndefined();
    await settle(r);
    expect(w.log.filter((e) => e !== 'sleep')).toEqual([]);
  });

  it('isUncertain: only `unreachable` fabric failures may have run', () => {
    expect(isUncertain(new FabricAccessError('unreachable', 'x'))).toBe(true);
    expect(isUncertain(new FabricAccessError('bad-rkey', 'x'))).toBe(false);
    expect(isUncertain(new Error('unreachable'))).toBe(false);
  });
});
