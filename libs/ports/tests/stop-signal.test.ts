import { describe, expect, it } from 'vitest';
import { Stopper } from '../src/index.js';
import type { StopSignal } from '../src/index.js';

/** A cancellation source under test: its signal and how to fire it. */
interface Source {
  readonly signal: StopSignal;
  stop(reason: unknown): void;
}

const abortController = (): Source => {
  const c = new AbortController();
  return { signal: c.signal, stop: (reason) => c.abort(reason) };
};
const stopper = (): Source => {
  const s = new Stopper();
  return { signal: s.signal, stop: (reason) => s.stop(reason) };
};
/** Mutant: dispatches a microtask later, as an EventTarget-free but asynchronous design might. */
const mutantAsyncDispatch = (): Source => {
  const s = new Stopper();
  return { signal: s.signal, stop: (reason) => queueMicrotask(() => s.stop(reason)) };
};

/**
 * What a waiter sees around a stop: listeners (one removed by an earlier one, one added twice),
 * promise continuations they start, and code after the stop call. Any change of order here is a
 * moved promise hop, i.e. a moved simulation schedule.
 */
async function recordedOrder(make: () => Source): Promise<string[]> {
  const log: string[] = [];
  const source = make();
  const second = () => log.push('second');
  const third = () => log.push('third (removed by first: never)');
  source.signal.addEventListener('abort', () => {
    log.push(`first:${String(source.signal.reason)}:${source.signal.aborted}`);
    source.signal.removeEventListener('abort', third);
    void Promise.resolve().then(() => log.push('first-continuation'));
  });
  source.signal.addEventListener('abort', second, { once: true });
  source.signal.addEventListener('abort', second);
  source.signal.addEventListener('abort', third);
  const removed = () => log.push('removed before the stop: never');
  source.signal.addEventListener('abort', removed);
  source.signal.removeEventListener('abort', removed);
  void Promise.resolve().then(() => log.push('earlier-microtask'));
  source.stop('why');
  log.push('after-stop');
  source.stop('again');
  source.signal.addEventListener('abort', () => log.push('added after the stop: never'));
  log.push(`reason:${String(source.signal.reason)}`);
  await new Promise((resolve) => setTimeout(resolve, 0));
  return log;
}

describe('Stopper', () => {
  it('dispatches as AbortController does: synchronously, in order, once, honouring removal', async () => {
    const expected = await recordedOrder(abortController);
    expect(expected).toEqual(['first:why:true', 'second', 'after-stop', 'reason:why', 'earlier-microtask', 'first-continuation']);
    expect(await recordedOrder(stopper)).toEqual(expected);
  });

  it('the recording catches an asynchronous dispatch (mutant)', async () => {
    expect(await recordedOrder(mutantAsyncDispatch)).not.toEqual(await recordedOrder(abortController));
  });

  it('starts clear, with no reason', () => {
    const s = new Stopper();
    expect(s.signal.aborted).toBe(false);
    expect(s.signal.reason).toBeUndefined();
  });
});
