import { HistoryRecorder, checkHistory, recordedClient } from '@lockfabric/check';
import { LockTimeoutError, clientKey } from '@lockfabric/ports';
import type { LockMode } from '@lockfabric/ports';
import { describe, expect, it } from 'vitest';
import { ALL_BITS, FREE, GRANT_OFFSET, NEXT_OFFSET, encodePointer, fieldAddr, pointerGeneration, withGeneration } from '../src/index.js';
import type { McsClient, McsGrant } from '../src/index.js';
import { scenario } from './scenario.js';

const LOCK = 5;
/** Enough events for the fixed release many times over; a hang ends idle or at this budget. */
const EVENT_BUDGET = 60_000;
const OPTIONS = { pollIntervalNs: 1_000 };

/** The script's clients all work on LOCK; their acquires and releases go into the history. */
function recorded(lock: McsClient, key: string, history: HistoryRecorder, now: () => number) {
  const client = recordedClient<McsGrant>(lock, key, history, now);
  return { acquire: (mode: LockMode, timeoutMs: number) => client.acquire(LOCK, mode, timeoutMs), release: (grant: McsGrant) => client.release(grant) };
}

/**
 * A holds the lock; D swaps itself into the tail and dies before linking (its swap is issued with
 * D's own verbs, then D takes no further step); E queues behind D. A releases, then F and A acquire.
 */
async function successorDiesBeforeLinking(protocolOptions: Record<string, number | boolean>) {
  const s = scenario({ protocolOptions: { ...OPTIONS, ...protocolOptions } });
  const history = new HistoryRecorder();
  const [a, dead, e, f] = [0, 1, 2, 3].map((i) => s.client(i)) as [ReturnType<typeof s.client>, ReturnType<typeof s.client>, ReturnType<typeof s.client>, ReturnType<typeof s.client>];
  const [ra, re, rf] = [a, e, f].map((c) => recorded(c.lock, clientKey(c.ports.self), history, s.now)) as [ReturnType<typeof recorded>, ReturnType<typeof recorded>, ReturnType<typeof recorded>];
  const deadPointer = encodePointer({ ...dead.ports.self, index: 0 });
  const aNext = fieldAddr(a.ports.descriptors.self, 0, NEXT_OFFSET);
  const deadGrant = fieldAddr(dead.ports.descriptors.self, 0, GRANT_OFFSET);
  const steps: string[] = [];
  let diedAtNs = 0;
  let done = false;
  let releaseNs = 0;
  const script = (async () => {
    const held = await ra.acquire('exclusive', 1);
    await s.at(10_000);
    await dead.ports.verbs.maskedCas(held.addr, 8, 0n, deadPointer, 0n, ALL_BITS, { lock: LOCK });
    diedAtNs = s.now();
    steps.push('D swapped in and died');
    const eOutcome = re.acquire('exclusive', 1).then(
      () => 'E granted',
      (error: unknown) => (error instanceof LockTimeoutError ? 'E timed out' : `E failed: ${String(error)}`),
    );
    await s.at(30_000);
    const releaseFromNs = s.now();
    await ra.release(held);
    releaseNs = s.now() - releaseFromNs;
    steps.push('A released');
    steps.push(await eOutcome);
    const fGrant = await rf.acquire('exclusive', 1);
    steps.push('F granted');
    await rf.release(fGrant);
    // A's queue node comes back with a new generation; a late link from D (old generation) is ignored.
    const again = await ra.acquire('exclusive', 1);
    const staleLink = withGeneration(deadPointer, 0);
    s.cluster.node(aNext.node).memory.cpuStore(aNext, staleLink);
    await ra.release(again);
    steps.push('A granted again');
    done = true;
  })();
  script.catch(() => undefined);
  const outcome = await s.scheduler.run({ stop: () => done, maxEvents: EVENT_BUDGET });
  if (done) await script;
  const verdict = checkHistory(history, { failedClients: new Map([[clientKey(dead.ports.self), diedAtNs]]) });
  return { s, steps, outcome, verdict, done, releaseNs, deadGrant: () => s.cluster.node(deadGrant.node).memory.cpuLoad(deadGrant) };
}

describe('mcs: a successor that dies between its swap and its link', () => {
  it('the release returns after releaseLinkTimeoutNs, the waiter behind the dead one times out typed, survivors acquire again', async () => {
    const run = await successorDiesBeforeLinking({ releaseLinkTimeoutNs: 2_000_000 });
    // E, abandoned behind the dead D, waits on its grant word without polling: nothing is left to
    // run once the script ends, so the run may end idle rather than stopped.
    expect(['stopped', 'idle']).toContain(run.outcome.reason);
    expect(run.done).toBe(true);
    expect(run.steps).toEqual(['D swapped in and died', 'A released', 'E timed out', 'F granted', 'A granted again']);
    expect(run.verdict.violations).toEqual([]);
    expect(run.verdict.liveness.ok).toBe(true);
    expect(Object.keys(run.verdict.liveness.counts.acquireErrors)).toEqual(['LockTimeoutError']);
    // Nobody ever handed the dead node the lock, and the lock ends free.
    expect(run.deadGrant()).toBe(0n);
    expect(run.s.tailWord(LOCK)).toBe(FREE);
  });

  it('the release waits releaseLinkTimeoutNs for the link (virtual time), then a few verbs more', async () => {
    for (const releaseLinkTimeoutNs of [500_000, 2_000_000]) {
      const run = await successorDiesBeforeLinking({ releaseLinkTimeoutNs });
      expect(run.done).toBe(true);
      expect(run.releaseNs).toBeGreaterThanOrEqual(releaseLinkTimeoutNs);
      expect(run.releaseNs).toBeLessThan(releaseLinkTimeoutNs + 50_000);
    }
  });

  it('mutant: the old unbounded wait for the link never returns: the run goes idle with the release stuck', async () => {
    const run = await successorDiesBeforeLinking({ mutantUnboundedReleaseWait: true });
    // The release waits for a change of its `next` word that never comes; no poll burns events.
    expect(run.outcome.reason).toBe('idle');
    expect(run.done).toBe(false);
    expect(run.steps).toEqual(['D swapped in and died']);
  });

  it('a link carries the predecessor generation and is ignored once it is stale', () => {
    const pointer = encodePointer({ node: 3, client: 9, index: 1 });
    expect(pointerGeneration(pointer)).toBe(0);
    const link = withGeneration(pointer, 4095);
    expect(pointerGeneration(link)).toBe(4095);
    expect(withGeneration(link, 0)).toBe(pointer);
    expect(pointerGeneration(withGeneration(pointer, 4096))).toBe(0);
  });
});
