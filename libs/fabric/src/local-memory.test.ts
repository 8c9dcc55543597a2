import { FabricAccessError } from '@lockfabric/ports';
import type { Completion, LocalMemory, RemoteAddr } from '@lockfabric/ports';
import { describe, expect, it } from 'vitest';
import { createLocalMemory } from './local-memory.js';
import { Nic } from './nic.js';
import { NodeMemory } from './node-memory.js';
import { u64ToBytes } from './u64.js';

function setup() {
  const memory = new NodeMemory(0);
  const info = memory.register(64);
  const nic = new Nic(memory);
  const word: RemoteAddr = { node: 0, region: info.region, rkey: info.rkey, offset: 8 };
  return { memory, nic, word };
}

/** A yield point that lets `steps` microtask turns pass, drawn from a small seeded generator. */
function seededYield(seed: number): () => Promise<void> {
  let state = seed >>> 0 || 1;
  return async () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    const steps = (state >>> 0) % 4;
    for (let i = 0; i < steps; i++) await Promise.resolve();
  };
}

/** The broken design ALock warns about: a CPU RMW with no mutual exclusion among CPUs either. */
function unserializedLocalMemory(memory: NodeMemory, yieldPoint: () => Promise<void>): Pick<LocalMemory, 'cas'> {
  return {
    cas: async (addr, compare, swap) => {
      const old = memory.cpuLoad(addr);
      await yieldPoint();
      if (old === compare) memory.cpuStore(addr, swap);
      return old;
    },
  };
}

async function twoLocalCasWinners(cas: LocalMemory['cas'], word: RemoteAddr): Promise<number> {
  const [a, b] = await Promise.all([cas(word, 0n, 1n), cas(word, 0n, 2n)]);
  return [a, b].filter((old) => old === 0n).length;
}

describe('createLocalMemory', () => {
  it('loads and stores words shared with the NIC', async () => {
    const { memory, nic, word } = setup();
    const local = createLocalMemory(memory, async () => {});
    await local.store(word, 41n);
    expect(nic.execute({ op: 'faa', addr: word, add: 1n }, 3).value).toBe(41n);
    expect(await local.load(word)).toBe(42n);
  });

  it('a remote CAS landing between the local load and store lets both CASes "succeed" (the modelled gap)', async () => {
    const { memory, nic, word } = setup();
    let remote: Completion | undefined;
    const local = createLocalMemory(memory, async () => {
      remote ??= nic.execute({ op: 'cas', addr: word, compare: 0n, swap: 2n }, 5);
    });
    const localOld = await local.cas(word, 0n, 1n);
    expect(localOld).toBe(0n); // the local process thinks it took the lock…
    expect(remote).toEqual({ status: 'ok', value: 0n }); // …and so does the remote one
    expect(await local.load(word)).toBe(2n); // the NIC's write-back erased the local update
  });

  it('a remote FAA in the gap erases the local FAA: the two are not atomic', async () => {
    const { memory, nic, word } = setup();
    let fired = false;
    const local = createLocalMemory(memory, async () => {
      if (!fired) nic.execute({ op: 'faa', addr: word, add: 10n }, 5);
      fired = true;
    });
    expect(await local.faa(word, 1n)).toBe(0n);
    expect(await local.load(word)).toBe(10n);
  });

  it('a 16-byte remote RMW in the gap breaks a local RMW on either of its words', async () => {
    const { memory, nic, word } = setup();
    const wide = { ...word, offset: 16 };
    const high = { ...word, offset: 24 };
    await createLocalMemory(memory, async () => {}).store(high, 3n);
    let fired = false;
    const local = createLocalMemory(memory, async () => {
      if (!fired) nic.execute({ op: 'masked-faa', addr: wide, width: 16, add: 1n << 64n, boundaryMask: 0n }, 5);
      fired = true;
    });
    expect(await local.cas(high, 3n, 100n)).toBe(3n);
    expect(await local.load(high)).toBe(4n);
  });

  it('remote READ/WRITE, failed remote CAS and local stores in the gap stay atomic with the local RMW', async () => {
    const { memory, nic, word } = setup();
    let step: (() => void) | undefined;
    const local = createLocalMemory(memory, async () => {
      step?.();
      step = undefined;
    });
    step = () => nic.execute({ op: 'write', addr: word, data: u64ToBytes(5n) }, 5);
    expect(await local.cas(word, 0n, 1n)).toBe(5n); // the CAS sees the write and fails
    expect(await local.load(word)).toBe(5n);

    step = () => nic.execute({ op: 'cas', addr: word, compare: 9n, swap: 9n }, 5); // fails, writes nothing
    expect(await local.cas(word, 5n, 6n)).toBe(5n);
    expect(await local.load(word)).toBe(6n);

    step = () => void local.store(word, 8n);
    expect(await local.faa(word, 1n)).toBe(8n);
    expect(await local.load(word)).toBe(9n);
  });

  it('stores are atomic by default; with storeGap a remote RMW in the gap erases the store', async () => {
    for (const storeGap of [false, true]) {
      const { memory, nic, word } = setup();
      let fired = false;
      const local = createLocalMemory(
        memory,
        async () => {
          if (!fired) nic.execute({ op: 'faa', addr: word, add: 10n }, 5);
          fired = true;
        },
        { storeGap },
      );
      await local.store(word, 100n);
      expect(await local.load(word)).toBe(storeGap ? 10n : 100n);
      expect(fired).toBe(storeGap);
    }
  });

  it('two LocalMemory instances of one node still serialize their RMWs', async () => {
    for (let seed = 1; seed <= 50; seed++) {
      const { memory, word } = setup();
      const a = createLocalMemory(memory, seededYield(seed));
      const b = createLocalMemory(memory, seededYield(seed + 1000));
      const olds = await Promise.all([a.cas(word, 0n, 1n), b.cas(word, 0n, 2n)]);
      expect(olds.filter((old) => old === 0n)).toHaveLength(1);
    }
  });

  it('two local CASes on one word never both succeed, over many interleavings', async () => {
    for (let seed = 1; seed <= 200; seed++) {
      const { memory, word } = setup();
      const local = createLocalMemory(memory, seededYield(seed));
      expect(await twoLocalCasWinners(local.cas, word)).toBe(1);
    }
  });

  it('the same harness catches CPU RMWs that are not serialized among themselves (mutant)', async () => {
    let doubleWins = 0;
    for (let seed = 1; seed <= 200; seed++) {
      const { memory, word } = setup();
      const broken = unserializedLocalMemory(memory, seededYield(seed));
      if ((await twoLocalCasWinners(broken.cas, word)) === 2) doubleWins++;
    }
    expect(doubleWins).toBeGreaterThan(0);
  });

  it('concurrent local FAAs lose no update; different words do not wait for each other', async () => {
    const { memory, word } = setup();
    const local = createLocalMemory(memory, seededYield(7));
    const other = { ...word, offset: 16 };
    const olds = await Promise.all([...Array(20)].map((_, i) => local.faa(i % 2 === 0 ? word : other, 1n)));
    expect(await local.load(word)).toBe(10n);
    expect(await local.load(other)).toBe(10n);
    expect(new Set(olds.filter((_, i) => i % 2 === 0))).toEqual(new Set([...Array(10)].map((_, i) => BigInt(i))));
  });

  it('FAA wraps at 2^64 and bad inputs reject with FabricAccessError', async () => {
    const { memory, word } = setup();
    const local = createLocalMemory(memory, async () => {});
    await local.store(word, (1n << 64n) - 1n);
    expect(await local.faa(word, 1n)).toBe((1n << 64n) - 1n);
    expect(await local.load(word)).toBe(0n);
    await expect(local.faa(word, -1n)).rejects.toMatchObject({ status: 'bad-request' });
    await expect(local.cas(word, 0n, 1n << 64n)).rejects.toBeInstanceOf(FabricAccessError);
    await expect(local.cas({ ...word, offset: 3 }, 0n, 1n)).rejects.toMatchObject({ status: 'misaligned' });
    await expect(local.load({ ...word, node: 9 })).rejects.toMatchObject({ status: 'unknown-node' });
    // A rejected RMW releases its word.
    expect(await local.cas(word, 0n, 4n)).toBe(0n);
  });
});

describe('LocalMemory.waitWhile', () => {
  const settled = async <T>(promise: Promise<T>): Promise<{ done: boolean; value?: T }> => {
    let state: { done: boolean; value?: T } = { done: false };
    void promise.then((value) => (state = { done: true, value }));
    for (let i = 0; i < 5; i++) await Promise.resolve();
    return state;
  };

  it('returns at once when the word already differs, and otherwise only when a store changes it', async () => {
    const { memory, nic, word } = setup();
    const local = createLocalMemory(memory, async () => {});
    await local.store(word, 3n);
    expect(await local.waitWhile(word, 0n)).toBe(3n);
    const waiting = local.waitWhile(word, 3n);
    // A store of the same value, and stores to the neighbouring words, do not end the wait.
    nic.execute({ op: 'write', addr: word, data: u64ToBytes(3n) }, 2);
    nic.execute({ op: 'faa', addr: { ...word, offset: 0 }, add: 1n }, 2);
    nic.execute({ op: 'faa', addr: { ...word, offset: 16 }, add: 1n }, 2);
    expect((await settled(waiting)).done).toBe(false);
    nic.execute({ op: 'cas', addr: word, compare: 3n, swap: 9n }, 2);
    expect(await settled(waiting)).toEqual({ done: true, value: 9n });
  });

  it('wakes on every kind of store: WRITE over the word, FAA, masked atomics, CPU store and RMW, reset', async () => {
    const { memory, nic, word } = setup();
    const local = createLocalMemory(memory, async () => {});
    const stores: (() => unknown)[] = [
      () => nic.execute({ op: 'write', addr: { ...word, offset: 4 }, data: new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]) }, 2),
      () => nic.execute({ op: 'faa', addr: word, add: 5n }, 2),
      () => nic.execute({ op: 'masked-cas', addr: { ...word, offset: 0 }, width: 16, compare: 0n, swap: 1n << 70n, compareMask: 0n, swapMask: 1n << 70n }, 2),
      () => nic.execute({ op: 'masked-faa', addr: word, width: 8, add: 1n, boundaryMask: 0n }, 2),
      () => memory.cpuStore(word, 77n),
      () => local.faa(word, 1n),
      () => memory.reset(word.region),
    ];
    for (const store of stores) {
      const before = memory.cpuLoad(word);
      const waiting = local.waitWhile(word, before);
      await store();
      const after = await settled(waiting);
      expect(after.done).toBe(true);
      expect(after.value).not.toBe(before);
    }
  });

  it('ends with the unchanged word when its signal aborts, and leaves no watcher behind', async () => {
    const { memory, nic, word } = setup();
    const local = createLocalMemory(memory, async () => {});
    const stop = new AbortController();
    const waiting = local.waitWhile(word, 0n, stop.signal);
    stop.abort('deadline');
    expect(await waiting).toBe(0n);
    let calls = 0;
    const unwatch = memory.watchWord(word, () => calls++);
    nic.execute({ op: 'faa', addr: word, add: 1n }, 2);
    unwatch();
    nic.execute({ op: 'faa', addr: word, add: 1n }, 2);
    expect(calls).toBe(1);
    expect(await local.waitWhile(word, 2n, AbortSignal.abort())).toBe(2n);
  });
});
