import type { LockMode } from '@lockfabric/ports';
import type { HistoryEvent } from '../../src/history.js';
import { TestRandom } from './seeded-random.js';

export interface RandomHistoryOptions {
  readonly seed: number;
  readonly clients: number;
  readonly locks: number;
  /** Operations (acquire + release) per client. */
  readonly opsPerClient: number;
  readonly readRatio?: number;
  /**
   * How the model lock serves waiters: `fifo` (correct, first come first served), `random`
   * (correct exclusion, unfair), `broken` (grants at once, ignoring holders: a mutant).
   */
  readonly policy?: 'fifo' | 'random' | 'broken';
}

interface Waiter {
  readonly client: number;
  readonly mode: LockMode;
  readonly grant: (atNs: number) => void;
}

interface LockState {
  shared: number;
  exclusive: boolean;
  readonly queue: Waiter[];
}

/**
 * A discrete-event model of clients using reader-writer locks, with message delays between a
 * client and the lock, so recorded times lag the lock's own decisions like in a real run.
 */
export function randomHistory(options: RandomHistoryOptions): HistoryEvent[] {
  const random = new TestRandom(options.seed);
  const readRatio = options.readRatio ?? 0.5;
  const policy = options.policy ?? 'fifo';
  const events: HistoryEvent[] = [];
  const heap: { timeNs: number; seq: number; run: () => void }[] = [];
  let seq = 0;
  let currentNs = 0;
  const at = (timeNs: number, run: () => void) => heapPush(heap, { timeNs, seq: seq++, run });
  const delay = () => random.between(1, 50);
  const locks: LockState[] = Array.from({ length: options.locks }, () => ({ shared: 0, exclusive: false, queue: [] }));

  const serve = (state: LockState, nowNs: number) => {
    while (state.queue.length > 0) {
      const index = policy === 'random' ? random.int(state.queue.length) : 0;
      const waiter = state.queue[index] as Waiter;
      const compatible = policy === 'broken' || (!state.exclusive && (waiter.mode === 'shared' || state.shared === 0));
      if (!compatible) return;
      state.queue.splice(index, 1);
      if (waiter.mode === 'exclusive') state.exclusive = true;
      else state.shared++;
      waiter.grant(nowNs);
    }
  };

  const startOp = (client: number, nowNs: number, remaining: number) => {
    if (remaining === 0) return;
    const name = `0/${client}`;
    const lock = random.int(options.locks);
    const mode: LockMode = random.next() < readRatio ? 'shared' : 'exclusive';
    const state = locks[lock] as LockState;
    events.push({ client: name, lock, mode, op: 'acquire', phase: 'invoke', timeNs: nowNs });
    at(nowNs + delay(), () => {
      state.queue.push({
        client,
        mode,
        grant: (grantNs) => {
          const okNs = grantNs + delay();
          events.push({ client: name, lock, mode, op: 'acquire', phase: 'ok', timeNs: okNs });
          const releaseNs = okNs + random.between(1, 200);
          at(releaseNs, () => {
            events.push({ client: name, lock, mode, op: 'release', phase: 'invoke', timeNs: releaseNs });
            const freedNs = releaseNs + delay();
            at(freedNs, () => {
              if (mode === 'exclusive') state.exclusive = false;
              else state.shared--;
              serve(state, freedNs);
              const releaseOkNs = freedNs + delay();
              events.push({ client: name, lock, mode, op: 'release', phase: 'ok', timeNs: releaseOkNs });
              const thinkNs = random.between(1, 100);
              at(releaseOkNs + thinkNs, () => startOp(client, releaseOkNs + thinkNs, remaining - 1));
            });
          });
        },
      });
      serve(state, currentNs);
    });
  };

  for (let c = 0; c < options.clients; c++) at(random.between(0, 100), () => startOp(c, currentNs, options.opsPerClient));
  for (let next = heapPop(heap); next; next = heapPop(heap)) {
    currentNs = next.timeNs;
    next.run();
  }
  return events.sort((a, b) => a.timeNs - b.timeNs);
}

type Item = { timeNs: number; seq: number; run: () => void };

function before(a: Item, b: Item): boolean {
  return a.timeNs < b.timeNs || (a.timeNs === b.timeNs && a.seq < b.seq);
}

function heapPush(heap: Item[], item: Item): void {
  heap.push(item);
  let i = heap.length - 1;
  while (i > 0) {
    const parent = (i - 1) >> 1;
    if (!before(heap[i] as Item, heap[parent] as Item)) break;
    [heap[i], heap[parent]] = [heap[parent] as Item, heap[i] as Item];
    i = parent;
  }
}

function heapPop(heap: Item[]): Item | undefined {
  const top = heap[0];
  const last = heap.pop();
  if (heap.length > 0 && last) {
    heap[0] = last;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < heap.length && before(heap[l] as Item, heap[m] as Item)) m = l;
      if (r < heap.length && before(heap[r] as Item, heap[m] as Item)) m = r;
      if (m === i) break;
      [heap[i], heap[m]] = [heap[m] as Item, heap[i] as Item];
      i = m;
    }
  }
  return top;
}
