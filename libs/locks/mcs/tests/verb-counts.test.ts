import { describe, expect, it } from 'vitest';
import { diff, scenario } from './scenario.js';

describe('mcs: verbs without contention', () => {
  it('one masked CAS (fetch-and-store) to acquire, one CAS to release, nothing else anywhere', async () => {
    const s = scenario();
    const a = s.client(0);
    let afterAcquire = s.verbs();
    let held = 0n;
    const run = (async () => {
      const grant = await a.lock.acquire(3, 'exclusive');
      afterAcquire = s.verbs();
      held = s.tailWord(3);
      await a.lock.release(grant);
    })();
    await s.scheduler.run();
    await run;
    expect(afterAcquire).toEqual({ mn: { 'masked-cas': 1 }, cn: {} });
    expect(diff(s.verbs().mn, afterAcquire.mn)).toEqual({ cas: 1 });
    expect(s.verbs().cn).toEqual({});
    expect(held).not.toBe(0n);
    expect(s.tailWord(3)).toBe(0n);
  });

  it('a shared acquire costs the same: MCS is a mutex', async () => {
    const s = scenario();
    const a = s.client(0);
    const run = (async () => {
      const grant = await a.lock.acquire(5, 'shared');
      expect(grant.heldAs).toBe('exclusive');
      await a.lock.release(grant);
    })();
    await s.scheduler.run();
    await run;
    expect(s.verbs()).toEqual({ mn: { 'masked-cas': 1, cas: 1 }, cn: {} });
  });

  it('the release counter is only bumped on a handover, so it costs nothing uncontended', async () => {
    const s = scenario({ protocolOptions: { releaseCounter: true } });
    const a = s.client(0);
    const run = (async () => a.lock.release(await a.lock.acquire(3, 'exclusive')))();
    await s.scheduler.run();
    await run;
    expect(s.verbs()).toEqual({ mn: { 'masked-cas': 1, cas: 1 }, cn: {} });
    expect(s.counterWord(3)).toBe(0n);
  });
});

describe('mcs: verbs of one handover', () => {
  async function handover(protocolOptions: Record<string, boolean> = {}) {
    const s = scenario({ protocolOptions });
    const a = s.client(0);
    const b = s.client(1);
    const phases: Record<string, ReturnType<typeof s.verbs>> = {};
    const run = (async () => {
      const grantA = await a.lock.acquire(2, 'exclusive');
      phases.aAcquired = s.verbs();
      const waiting = b.lock.acquire(2, 'exclusive');
      await s.at(s.now() + 20_000);
      phases.bQueued = s.verbs();
      await a.lock.release(grantA);
      phases.aReleased = s.verbs();
      const grantB = await waiting;
      phases.bGranted = s.verbs();
      await b.lock.release(grantB);
      phases.bReleased = s.verbs();
    })();
    await s.scheduler.run();
    await run;
    const step = (from: string, to: string) => ({ mn: diff(phases[to]!.mn, phases[from]!.mn), cn: diff(phases[to]!.cn, phases[from]!.cn) });
    return { s, aAcquire: phases.aAcquired, bEnqueue: step('aAcquired', 'bQueued'), aRelease: step('bQueued', 'aReleased'), bWake: step('aReleased', 'bGranted'), bRelease: step('bGranted', 'bReleased') };
  }

  it('waiter: fetch-and-store plus one WRITE to link; releaser: one WRITE to hand over, no memory-node verb', async () => {
    const r = await handover();
    expect(r.aAcquire).toEqual({ mn: { 'masked-cas': 1 }, cn: {} });
    expect(r.bEnqueue).toEqual({ mn: { 'masked-cas': 1 }, cn: { write: 1 } });
    expect(r.aRelease).toEqual({ mn: {}, cn: { write: 1 } });
    expect(r.bWake).toEqual({ mn: {}, cn: {} });
    expect(r.bRelease).toEqual({ mn: { cas: 1 }, cn: {} });
    expect(r.s.tailWord(2)).toBe(0n);
  });

  it('with the release counter, the handover adds one FAA on the memory node', async () => {
    const r = await handover({ releaseCounter: true });
    expect(r.aRelease).toEqual({ mn: { faa: 1 }, cn: { write: 1 } });
    expect(r.bRelease).toEqual({ mn: { cas: 1 }, cn: {} });
    expect(r.s.counterWord(2)).toBe(1n);
  });
});
