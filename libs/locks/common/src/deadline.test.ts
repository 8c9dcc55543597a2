import { LockTimeoutError } from '@lockfabric/ports';
import type { Clock, LocalMemory, RemoteAddr } from '@lockfabric/ports';
import { setImmediate as nextMacrotask } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { AcquireDeadline, waitWhileLocal } from './deadline.js';

/** Virtual time for these tests: timers fire in time order once every continuation has run. */
function virtualWorld() {
  let now = 0;
  let seq = 0;
  const timers: { at: number; seq: number; fire: () => void }[] = [];
  const words = new Map<number, bigint>();
  const watchers = new Set<() => void>();
  const at = (timeNs: number, fire: () => void) => timers.push({ at: Math.max(now, timeNs), seq: seq++, fire });
  const clock: Clock = {
    nowNs: () => now,
    sleep: (ns, signal) =>
      new Promise<void>((resolve, reject) => {
        if (signal?.aborted) return reject(signal.reason);
        signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
        at(now + ns, resolve);
      }),
  };
  const word = (addr: RemoteAddr) => words.get(addr.offset) ?? 0n;
  const cpu: Pick<LocalMemory, 'load' | 'waitWhile'> = {
    load: async (addr) => word(addr),
    waitWhile: (addr, value, signal) =>
      new Promise((resolve) => {
        if (word(addr) !== value || signal?.aborted) return resolve(word(addr));
        const check = () => {
          if (word(addr) === value && !signal?.aborted) return;
          watchers.delete(check);
          resolve(word(addr));
        };
        watchers.add(check);
        signal?.addEventListener('abort', check, { once: true });
      }),
  };
  const store = (addr: RemoteAddr, value: bigint) => {
    words.set(addr.offset, value);
    for (const watcher of [...watchers]) watcher();
  };
  const run = async () => {
    for (;;) {
      await nextMacrotask();
      timers.sort((a, b) => a.at - b.at || a.seq - b.seq);
      const next = timers.shift();
      if (!next) return;
      now = next.at;
      next.fire();
    }
  };
  return { clock, cpu: cpu as LocalMemory, store, at, run, now: () => now };
}

const addr: RemoteAddr = { node: 0, region: 0, rkey: 0, offset: 8 };

describe('waitWhileLocal', () => {
  it('returns at the poll that would have seen the change, not at the change', async () => {
    const w = virtualWorld();
    w.at(350, () => w.store(addr, 1n));
    let endedAt = -1;
    void waitWhileLocal(w.clock, w.cpu, [{ addr, value: 0n }], { pollNs: 200 }).then(() => (endedAt = w.now()));
    await w.run();
    expect(endedAt).toBe(400);
  });

  it('without a poll period returns at the change itself; a store of the same value does not end it', async () => {
    const w = virtualWorld();
    w.at(100, () => w.store(addr, 0n));
    w.at(350, () => w.store(addr, 2n));
    let endedAt = -1;
    void waitWhileLocal(w.clock, w.cpu, [{ addr, value: 0n }]).then(() => (endedAt = w.now()));
    await w.run();
    expect(endedAt).toBe(350);
  });

  it('ends at the deadline when nothing changes, and at the next poll after an abort', async () => {
    const w = virtualWorld();
    const ends: number[] = [];
    void waitWhileLocal(w.clock, w.cpu, [{ addr, value: 0n }], { untilNs: 500, pollNs: 200 }).then(() => ends.push(w.now()));
    const stop = new AbortController();
    w.at(250, () => stop.abort('recovery'));
    void waitWhileLocal(w.clock, w.cpu, [{ addr, value: 0n }], { pollNs: 200, signals: [stop.signal] }).then(() => ends.push(w.now()));
    await w.run();
    expect(ends).toEqual([400, 500]);
  });

  it('AcquireDeadline.waitWhile throws the typed timeout once the deadline passes unchanged', async () => {
    const w = virtualWorld();
    const deadline = new AcquireDeadline(w.clock, 7, 'exclusive', { timeoutMs: 0.001 });
    let outcome: unknown;
    void deadline.waitWhile(w.cpu, addr, 0n, 200).then(
      () => (outcome = 'returned'),
      (error: unknown) => (outcome = error),
    );
    await w.run();
    expect(outcome).toBeInstanceOf(LockTimeoutError);
    expect(w.now()).toBe(1_000);
  });
});
