import { describe, expect, it } from 'vitest';
import { randomHistory } from '../tests/support/random-history.js';
import { TestRandom } from '../tests/support/seeded-random.js';
import { fnv1a64Hex, historyDigest } from './digest.js';
import { HistoryRecorder } from './history.js';
import type { HistoryEvent } from './history.js';

function referenceFnv(bytes: Uint8Array): string {
  let hash = 0xcbf29ce484222325n;
  for (const byte of bytes) hash = ((hash ^ BigInt(byte)) * 0x100000001b3n) & 0xffffffffffffffffn;
  return hash.toString(16).padStart(16, '0');
}

describe('FNV-1a 64', () => {
  it('matches the published test vectors', () => {
    expect(fnv1a64Hex('')).toBe('cbf29ce484222325');
    expect(fnv1a64Hex('a')).toBe('af63dc4c8601ec8c');
    expect(fnv1a64Hex('foobar')).toBe('85944171f73967e8');
  });

  it('agrees with a bigint reference on random bytes, and hashes text as UTF-8', () => {
    const random = new TestRandom(1);
    for (let round = 0; round < 50; round++) {
      const bytes = Uint8Array.from({ length: random.int(64) }, () => random.int(256));
      expect(fnv1a64Hex(bytes)).toBe(referenceFnv(bytes));
    }
    for (const text of ['lock 3/17', 'naïve', 'ロック', 'emoji 🔒 done']) {
      expect(fnv1a64Hex(text)).toBe(referenceFnv(new TextEncoder().encode(text)));
    }
  });
});

describe('historyDigest', () => {
  const history = randomHistory({ seed: 11, clients: 4, locks: 3, opsPerClient: 20 });

  it('is stable: same history, same digest, whatever form it comes in', () => {
    const digest = historyDigest(history);
    expect(digest).toMatch(/^[0-9a-f]{16}$/);
    expect(historyDigest(history.map((e) => ({ ...e })))).toBe(digest);
    const recorder = new HistoryRecorder();
    for (const event of history) recorder.append(event);
    expect(historyDigest(recorder)).toBe(digest);
    expect(historyDigest([])).toBe('cbf29ce484222325');
  });

  it('is pinned: the documented text form of a fixed history hashes to a fixed value', () => {
    // A change here changes every recorded sim digest; it must be deliberate.
    const fixed: HistoryEvent[] = [
      { client: '1/0', lock: 3, mode: 'exclusive', op: 'acquire', phase: 'invoke', timeNs: 100 },
      { client: '1/0', lock: 3, mode: 'exclusive', op: 'acquire', phase: 'ok', timeNs: 180 },
      { client: '2/5', lock: 3, mode: 'shared', op: 'acquire', phase: 'invoke', timeNs: 200 },
      { client: '1/0', lock: 3, mode: 'exclusive', op: 'release', phase: 'invoke', timeNs: 300 },
      { client: '1/0', lock: 3, mode: 'exclusive', op: 'release', phase: 'ok', timeNs: 350 },
      { client: '2/5', lock: 3, mode: 'shared', op: 'acquire', phase: 'fail', timeNs: 1000, error: 'LockTimeoutError' },
    ];
    const text = fixed
      .map((e) => `${e.client.length}:${e.client}\t${e.lock}\t${e.mode}\t${e.op}\t${e.phase}\t${e.timeNs}\t${e.error === undefined ? '-' : `${e.error.length}:${e.error}`}\n`)
      .join('');
    expect(historyDigest(fixed)).toBe(referenceFnv(new TextEncoder().encode(text)));
    expect(historyDigest(fixed)).toBe('e9d6431bff25be39');
  });

  it('does not depend on how same-time events of different clients were merged', () => {
    const a: HistoryEvent = { client: 'a', lock: 1, mode: 'shared', op: 'acquire', phase: 'invoke', timeNs: 5 };
    const b: HistoryEvent = { ...a, client: 'b' };
    expect(historyDigest([a, b])).toBe(historyDigest([b, a]));
    const later = { ...a, phase: 'ok' as const };
    expect(historyDigest([a, later])).not.toBe(historyDigest([later, a]));
  });

  it('changes when any field of any event changes', () => {
    const base = historyDigest(history);
    const mutations: ((e: HistoryEvent) => HistoryEvent)[] = [
      (e) => ({ ...e, client: e.client + 'x' }),
      (e) => ({ ...e, lock: e.lock + 1 }),
      (e) => ({ ...e, mode: e.mode === 'shared' ? 'exclusive' : 'shared' }),
      (e) => ({ ...e, op: e.op === 'acquire' ? 'release' : 'acquire' }),
      (e) => ({ ...e, phase: e.phase === 'invoke' ? 'fail' : 'invoke' }),
      (e) => ({ ...e, timeNs: e.timeNs + 0.5 }),
      (e) => ({ ...e, error: 'LockAbortedError' }),
    ];
    const seen = new Set([base]);
    for (const index of [0, 17, history.length - 1]) {
      for (const mutate of mutations) {
        const mutated = history.slice();
        mutated[index] = mutate(history[index] as HistoryEvent);
        const digest = historyDigest(mutated);
        expect(seen.has(digest)).toBe(false);
        seen.add(digest);
      }
    }
    expect(historyDigest(history.slice(1))).not.toBe(base);
  });
});
