import { createHook } from 'node:async_hooks';
import type { Clock, Grant, LockClient } from '@lockfabric/ports';
import { describe, expect, it } from 'vitest';
import { PhaseTiming } from './phase-timing.js';
import { VerbAccounting } from './verb-accounting.js';

/**
 * The bench wrappers sit on every acquire and release of a live run. These tests count the
 * promises each creates per operation beyond the protocol's own (async_hooks sees every one):
 * a count, not a timing, so they hold on any machine.
 */

const clock: Clock = { nowNs: () => 0, sleep: () => Promise.resolve() };

/** A client whose acquire and release settle only when the test says so. */
function gatedClient(): { client: LockClient<Grant>; settle: (ok: boolean) => void } {
  let finish: (ok: boolean) => void = () => undefined;
  const pending = <T>(value: T) =>
    new Promise<T>((resolve, reject) => {
      finish = (ok) => (ok ? resolve(value) : reject(new Error('refused')));
    });
  return {
    client: { acquire: (lock, mode) => pending({ lock, mode }), release: () => pending(undefined) },
    settle: (ok) => finish(ok),
  };
}

/** Promises created from the call until it settles (async_hooks sees every one). */
async function promisesUntilSettled(call: () => Promise<unknown>, settleInner: () => void): Promise<number> {
  let created = 0;
  const hook = createHook({ init: (_id, type) => void (type === 'PROMISE' && created++) });
  hook.enable();
  try {
    const outer = call();
    settleInner();
    await outer.catch(() => undefined);
  } finally {
    hook.disable();
  }
  return created;
}

type Wrap = (inner: LockClient<Grant>) => LockClient<Grant>;

/** Promises a wrapper adds over the bare client, for an acquire that succeeds and a release that fails. */
async function extraPromises(wrap: Wrap): Promise<{ acquire: number; release: number }> {
  const measure = async (client: LockClient<Grant>, settle: (ok: boolean) => void) => {
    // the second of two identical calls: the first one pays for anything created lazily
    let acquire = 0;
    let release = 0;
    for (let round = 0; round < 2; round++) {
      acquire = await promisesUntilSettled(() => client.acquire(1, 'exclusive'), () => settle(true));
      release = await promisesUntilSettled(() => client.release({ lock: 1, mode: 'exclusive' }), () => settle(false));
    }
    return { acquire, release };
  };
  const bare = gatedClient();
  const base = await measure(bare.client, bare.settle);
  const gated = gatedClient();
  const wrapped = await measure(wrap(gated.client), gated.settle);
  return { acquire: wrapped.acquire - base.acquire, release: wrapped.release - base.release };
}

/** The wrapper as it was: an async function awaiting the inner call (the mutant the count must catch). */
const asyncWrapperMutant: Wrap = (inner) => ({
  acquire: async (lock, mode, options) => {
    try {
      return await inner.acquire(lock, mode, options);
    } finally {
      // phase bookkeeping happened here
    }
  },
  release: async (grant) => {
    try {
      return await inner.release(grant);
    } finally {
      // phase bookkeeping happened here
    }
  },
});

describe('bench wrappers: promises per operation', () => {
  it('the count catches an async wrapper (mutant): it creates more than one promise per operation', async () => {
    // Two on Node 20 (its own and the await's, which V8 makes while a hook watches); at least two anywhere.
    const extra = await extraPromises(asyncWrapperMutant);
    expect(extra.acquire).toBeGreaterThan(1);
    expect(extra.release).toBeGreaterThan(1);
  });

  it('VerbAccounting.wrapClient creates one promise per operation and keeps the phase until the call settles', async () => {
    const phases: (string | undefined)[] = [];
    const accounting = new VerbAccounting();
    expect(await extraPromises((inner) => accounting.wrapClient(inner, (phase) => phases.push(phase)))).toEqual({ acquire: 1, release: 1 });
    expect(phases).toEqual(['acquire', undefined, 'release', undefined, 'acquire', undefined, 'release', undefined]);
  });

  it('PhaseTiming creates one promise per operation and counts each completed one once', async () => {
    const timing = new PhaseTiming();
    const { wrap } = timing.forClient<Grant>(clock);
    expect(await extraPromises(wrap)).toEqual({ acquire: 1, release: 1 });
    expect(timing.totals['acquire-exclusive'].operations).toBe(2);
    // a failed release is not a completed one
    expect(timing.totals.release.operations).toBe(0);
  });

  it('VerbAccounting.wrapClient with PhaseTiming hooks does both jobs with one promise per operation (the two wrappers nested, the old path, made two)', async () => {
    const timed = (nested: boolean): { timing: PhaseTiming; phases: (string | undefined)[]; wrap: Wrap } => {
      const timing = new PhaseTiming();
      const accounting = new VerbAccounting(timing);
      const phases: (string | undefined)[] = [];
      const setPhase = (phase: string | undefined) => void phases.push(phase);
      const { wrap, hooks } = timing.forClient<Grant>(clock);
      return { timing, phases, wrap: nested ? (inner) => accounting.wrapClient(wrap(inner), setPhase) : (inner) => accounting.wrapClient(inner, setPhase, hooks) };
    };
    const one = timed(false);
    expect(await extraPromises(one.wrap)).toEqual({ acquire: 1, release: 1 });
    const old = timed(true);
    expect(await extraPromises(old.wrap)).toEqual({ acquire: 2, release: 2 });
    // the same bookkeeping either way: two completed acquires timed, failed releases not, phases closed
    for (const { timing, phases } of [one, old]) {
      expect(timing.totals['acquire-exclusive'].operations).toBe(2);
      expect(timing.totals.release.operations).toBe(0);
      expect(phases).toEqual(['acquire', undefined, 'release', undefined, 'acquire', undefined, 'release', undefined]);
    }
  });

  it('a wrapped call that throws synchronously rejects and leaves no phase open', async () => {
    const phases: (string | undefined)[] = [];
    const throwing: LockClient<Grant> = {
      acquire: () => {
        throw new Error('sync');
      },
      release: () => Promise.resolve(),
    };
    const accounting = new VerbAccounting();
    await expect(accounting.wrapClient(throwing, (phase) => phases.push(phase)).acquire(1, 'exclusive')).rejects.toThrow('sync');
    expect(phases).toEqual(['acquire', undefined]);
    const timing = new PhaseTiming();
    await expect(timing.forClient<Grant>(clock).wrap(throwing).acquire(1, 'exclusive')).rejects.toThrow('sync');
    expect(timing.totals['acquire-exclusive'].operations).toBe(0);
    const both = new VerbAccounting(timing);
    phases.length = 0;
    await expect(both.wrapClient(throwing, (phase) => phases.push(phase), timing.forClient<Grant>(clock).hooks).acquire(1, 'exclusive')).rejects.toThrow('sync');
    expect(phases).toEqual(['acquire', undefined]);
    expect(timing.totals['acquire-exclusive'].operations).toBe(0);
  });
});
