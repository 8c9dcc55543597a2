import { checkHistory, historyDigest, HistoryRecorder, summarizeVerdict } from '@lockfabric/check';
import { LockAbortedError } from '@lockfabric/ports';
import type { ClientPorts, Grant, LockClient } from '@lockfabric/ports';
import { describe, expect, it } from 'vitest';
import { ModelLockService } from '../tests/support/model-lock.js';
import { TestRandom } from '../tests/support/seeded-random.js';
import { VirtualTime } from '../tests/support/virtual-time.js';
import { RunStats, summarize } from './results.js';
import { errorCode, errorName, runClientLoop, stopAfter } from './runner.js';
import { opsBudgetFor } from './spec.js';
import type { WorkloadSpec } from './spec.js';

const baseSpec: WorkloadSpec = {
  clients: 6,
  locks: 3,
  readRatio: 0.4,
  distribution: { zipf: 0.99 },
  operations: 300,
  thinkNs: 200,
  criticalSectionNs: 1000,
  seed: 17,
};

type LoopPorts = Pick<ClientPorts, 'self' | 'clock' | 'random'>;

async function runWorkload(spec: WorkloadSpec, service: { client(): LockClient }, time: VirtualTime, shouldStop = () => false) {
  const recorder = new HistoryRecorder();
  const stats = new RunStats();
  const loops = Array.from({ length: spec.clients }, (_, i) => {
    const ports: LoopPorts = { self: { node: 1 + (i % 2), client: i }, clock: time.clock, random: new TestRandom(spec.seed * 1000 + i) };
    return runClientLoop({ client: service.client(), ports, spec, recorder, stats, shouldStop, opsBudget: opsBudgetFor(spec, i) });
  });
  const results = await time.run(Promise.all(loops));
  return { recorder, stats, results, elapsedNs: time.clock.nowNs() };
}

describe('runClientLoop', () => {
  it('runs a workload whose history passes every checker, with stats that match it', async () => {
    const time = new VirtualTime();
    const { recorder, stats, results, elapsedNs } = await runWorkload(baseSpec, new ModelLockService(time.clock, { delayNs: 100 }), time);
    expect(results.reduce((n, r) => n + r.operations, 0)).toBe(300);
    expect(recorder.size).toBe(4 * 300);
    const verdict = checkHistory(recorder, { fifo: true });
    expect(verdict.ok, summarizeVerdict(verdict)).toBe(true);
    expect(verdict.stats.clients).toBe(6);
    expect(recorder.event(0).client).toMatch(/^[12]\/\d$/);

    const summary = summarize(stats, elapsedNs);
    expect([summary.acquires, summary.releases, summary.failures]).toEqual([300, 300, 0]);
    // Uncontended, an acquire is two one-way delays; a release likewise.
    expect(summary.latencyUs.p50).toBeGreaterThanOrEqual(0.2);
    expect(summary.releaseLatencyUs.max).toBeCloseTo(0.2, 5);
    expect(summary.throughput).toBeGreaterThan(0);
  });

  it('feeds a broken lock into a history the exclusion checker rejects', async () => {
    const time = new VirtualTime();
    const { recorder } = await runWorkload(baseSpec, new ModelLockService(time.clock, { delayNs: 100, ignoreConflicts: true }), time);
    const verdict = checkHistory(recorder);
    expect(verdict.ok).toBe(false);
    expect(verdict.exclusion.violationCount).toBeGreaterThan(0);
    expect(verdict.liveness.ok).toBe(true);
  });

  it('records timeouts as failed acquires with the error name, counted by code', async () => {
    const spec: WorkloadSpec = { ...baseSpec, locks: 1, readRatio: 0, criticalSectionNs: 3_000_000, timeoutMs: 1, operations: 60 };
    const time = new VirtualTime();
    const { recorder, stats } = await runWorkload(spec, new ModelLockService(time.clock, { delayNs: 100 }), time);
    const failures = recorder.events().filter((e) => e.phase === 'fail');
    expect(failures.length).toBeGreaterThan(0);
    expect(new Set(failures.map((e) => e.error))).toEqual(new Set(['LockTimeoutError']));
    expect(stats.failuresByCode.get('LOCK_TIMEOUT')).toBe(failures.length);
    expect(stats.acquires + stats.acquireFailures).toBe(60);
    const verdict = checkHistory(recorder);
    expect(verdict.ok, summarizeVerdict(verdict)).toBe(true);
    expect(verdict.liveness.counts.acquireErrors).toEqual({ LockTimeoutError: failures.length });
  });

  it('is deterministic: same seed, same history digest; another seed, another digest', async () => {
    const digest = async (seed: number) => {
      const time = new VirtualTime();
      const { recorder } = await runWorkload({ ...baseSpec, seed }, new ModelLockService(time.clock, { delayNs: 100 }), time);
      return historyDigest(recorder);
    };
    const first = await digest(17);
    expect(await digest(17)).toBe(first);
    expect(await digest(18)).not.toBe(first);
  });

  it('stops when told, by duration on the clock', async () => {
    const time = new VirtualTime();
    const spec: WorkloadSpec = { ...baseSpec, operations: undefined, durationMs: 0.05 };
    const stop = stopAfter(time.clock, spec.durationMs);
    const { results, elapsedNs, recorder } = await runWorkload(spec, new ModelLockService(time.clock, { delayNs: 100 }), time, stop);
    expect(results.every((r) => r.operations > 0)).toBe(true);
    // Operations in flight at the deadline finish (release included) before their loop ends.
    expect(elapsedNs).toBeGreaterThanOrEqual(50_000);
    expect(elapsedNs).toBeLessThan(50_000 + 20_000);
    expect(checkHistory(recorder).ok).toBe(true);
  });

  it('skips the sleeps for zero critical section and think time', async () => {
    const time = new VirtualTime();
    const spec: WorkloadSpec = { ...baseSpec, clients: 1, operations: 10, thinkNs: 0, criticalSectionNs: 0 };
    const instant: LockClient = { acquire: async (lock, mode) => ({ lock, mode }), release: async () => {} };
    const { recorder, stats } = await runWorkload(spec, { client: () => instant }, time);
    expect(time.sleeps).toBe(0);
    expect(recorder.size).toBe(40);
    expect(stats.acquires).toBe(10);
  });

  it('ends after releasing when its signal aborts mid-hold, and records release failures', async () => {
    const time = new VirtualTime();
    const controller = new AbortController();
    const releases: Grant[] = [];
    const client: LockClient = {
      acquire: async (lock, mode) => ({ lock, mode }),
      release: async (grant) => {
        releases.push(grant);
        controller.abort(new LockAbortedError(grant.lock, 'test over'));
        throw new Error('release went wrong');
      },
    };
    const recorder = new HistoryRecorder();
    const stats = new RunStats();
    const ports: LoopPorts = { self: { node: 0, client: 0 }, clock: time.clock, random: new TestRandom(1) };
    const result = await time.run(
      runClientLoop({ client, ports, spec: baseSpec, recorder, stats, shouldStop: () => false, signal: controller.signal }),
    );
    expect(result).toEqual({ operations: 1, acquired: 1, acquireFailures: 0, releaseFailures: 1 });
    expect(releases).toHaveLength(1);
    expect(recorder.events().map((e) => `${e.op}:${e.phase}${e.error ? `:${e.error}` : ''}`)).toEqual([
      'acquire:invoke',
      'acquire:ok',
      'release:invoke',
      'release:fail:Error',
    ]);
    expect(stats.failuresByCode.get('Error')).toBe(1);
  });
});

describe('error naming', () => {
  it('uses the class name for histories and the code for stats', () => {
    const error = new LockAbortedError(3, 'reset');
    expect(errorName(error)).toBe('LockAbortedError');
    expect(errorCode(error)).toBe('LOCK_ABORTED');
    expect(errorName(new TypeError('x'))).toBe('TypeError');
    expect(errorCode(new TypeError('x'))).toBe('TypeError');
    expect(errorName('boom')).toBe('boom');
    expect(errorCode(42)).toBe('UnknownError');
  });
});
