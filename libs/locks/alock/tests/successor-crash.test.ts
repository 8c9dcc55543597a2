import { HistoryRecorder, checkHistory, recordedClient } from '@lockfabric/check';
import { LockTimeoutError, clientKey, lockAddress } from '@lockfabric/ports';
import type { LockMode } from '@lockfabric/ports';
import { describe, expect, it } from 'vitest';
import { LOCAL, NULL_REF, REMOTE, decodeRef, descriptorAddrs, encodeRef, refGeneration, tailAddr, withRefGeneration } from '../src/index.js';
import type { AlockClient, AlockGrant } from '../src/index.js';
import { checkAlockEvents } from './support/invariants.js';
import { scriptedSim } from './support/scripted.js';

const LOCK = 1;
/** Enough events for the fixed release many times over; a hang ends idle or at this budget. */
const EVENT_BUDGET = 60_000;
const OPTIONS = { spinNs: 1_000 };

/** The script's clients all work on LOCK; their acquires and releases go into the history. */
function recorded(lock: AlockClient, key: string, history: HistoryRecorder, now: () => number) {
  const client = recordedClient<AlockGrant>(lock, key, history, now);
  return { acquire: (mode: LockMode, timeoutMs: number) => client.acquire(LOCK, mode, timeoutMs), release: (grant: AlockGrant) => client.release(grant) };
}

/**
 * Remote holder A; remote D swaps itself into T_R and dies before linking (a raw CAS with D's own
 * verbs, then no further step); remote E queues behind D; local L waits at the Peterson gate, which
 * D's entry in T_R keeps shut. A releases; then L, remote F and A acquire in turn.
 */
async function remoteSuccessorDies(protocolOptions: Record<string, number | boolean>) {
  const sim = scriptedSim({ computeNodes: 2 });
  const [cn0, cn1] = [sim.computeNodes[0]!, sim.computeNodes[1]!];
  const options = { ...OPTIONS, ...protocolOptions };
  const history = new HistoryRecorder();
  const now = () => sim.cluster.clock.nowNs();
  const make = (node: number, client: number) => {
    const lock = sim.client({ node, client }, options);
    return recorded(lock, clientKey({ node, client }), history, now);
  };
  const [a, e, l, f] = [make(cn0, 0), make(cn0, 2), make(sim.home, 3), make(cn1, 4)];
  const deadPorts = sim.cluster.clientPorts({ node: cn1, client: 1 });
  const deadRef = encodeRef({ node: cn1, client: 1, index: 0 });
  const entry = lockAddress(sim.cluster.layout, LOCK);
  const aNext = descriptorAddrs(sim.cluster.clientPorts({ node: cn0, client: 0 }).descriptors, { node: cn0, client: 0, index: 0 }).next;
  const deadBudget = descriptorAddrs(deadPorts.descriptors, { node: cn1, client: 1, index: 0 }).budget;
  const steps: string[] = [];
  let diedAtNs = 0;
  let done = false;
  const typed = (who: string) => [() => `${who} granted`, (error: unknown) => (error instanceof LockTimeoutError ? `${who} timed out` : `${who} failed: ${String(error)}`)] as const;
  const script = (async () => {
    const held = await a.acquire('exclusive', 1);
    await sim.cluster.clock.sleep(10_000);
    // D's swap: the NIC CAS an acquire issues, once it knows the current tail (A).
    const tail = tailAddr(entry, REMOTE);
    const seen = await deadPorts.verbs.cas(tail, NULL_REF, deadRef, { lock: LOCK });
    await deadPorts.verbs.cas(tail, seen, deadRef, { lock: LOCK });
    diedAtNs = now();
    steps.push('D swapped in and died');
    const eOutcome = e.acquire('exclusive', 1).then(...typed('E'));
    const lOutcome = l.acquire('exclusive', 5).then(async (grant) => {
      await l.release(grant);
      return 'L granted';
    }, typed('L')[1]);
    await sim.cluster.clock.sleep(20_000);
    await a.release(held);
    steps.push('A released');
    steps.push(await eOutcome);
    steps.push(await lOutcome);
    const fGrant = await f.acquire('exclusive', 1);
    steps.push('F granted');
    await f.release(fGrant);
    // A's descriptor comes back with a new generation; a late link from D (old generation) is ignored.
    const again = await a.acquire('exclusive', 1);
    sim.cluster.node(aNext.node).memory.cpuStore(aNext, withRefGeneration(deadRef, 0));
    await a.release(again);
    steps.push('A granted again');
    done = true;
  })();
  script.catch(() => undefined);
  const outcome = await sim.scheduler.run({ stop: () => done, maxEvents: EVENT_BUDGET });
  if (done) await script;
  const verdict = checkHistory(history, { failedClients: new Map([[clientKey({ node: cn1, client: 1 }), diedAtNs]]) });
  const memory = sim.cluster.node(sim.home).memory;
  return {
    sim,
    steps,
    outcome,
    verdict,
    done,
    invariants: checkAlockEvents(sim.events, { localBudget: 5, remoteBudget: 5 }),
    deadBudget: () => sim.cluster.node(deadBudget.node).memory.cpuLoad(deadBudget),
    tails: () => [memory.cpuLoad(tailAddr(entry, LOCAL)), memory.cpuLoad(tailAddr(entry, REMOTE))],
  };
}

describe('alock: a remote successor that dies between its swap and its link', () => {
  it('the release clears T_R after releaseLinkTimeoutNs; the waiter behind the dead one times out typed; local and remote survivors acquire', async () => {
    const run = await remoteSuccessorDies({ releaseLinkTimeoutNs: 2_000_000 });
    expect(run.outcome.reason).toBe('stopped');
    expect(run.steps).toEqual(['D swapped in and died', 'A released', 'E timed out', 'L granted', 'F granted', 'A granted again']);
    expect(run.verdict.violations).toEqual([]);
    expect(run.verdict.liveness.ok).toBe(true);
    expect(Object.keys(run.verdict.liveness.counts.acquireErrors)).toEqual(['LockTimeoutError']);
    expect(run.invariants.violations).toEqual([]);
    expect(run.sim.events.filter((event) => event.type === 'cut')).toHaveLength(1);
    // The dead descriptor was never handed the lock, and both tails end empty.
    expect(run.deadBudget()).toBe(0n);
    expect(run.tails()).toEqual([NULL_REF, NULL_REF]);
  });

  it('mutant: the old unbounded wait for the link never returns: the run goes idle with the release stuck', async () => {
    const run = await remoteSuccessorDies({ mutantUnboundedReleaseWait: true });
    // The release waits for a change of its `next` word that never comes; no poll burns events.
    expect(run.outcome.reason).toBe('idle');
    expect(run.done).toBe(false);
    expect(run.steps).toEqual(['D swapped in and died']);
  });

  it('references carry a 7-bit link generation that decoding ignores', () => {
    const ref = encodeRef({ node: 2, client: 7, index: 1 });
    expect(refGeneration(ref)).toBe(0);
    const link = withRefGeneration(ref, 127);
    expect(refGeneration(link)).toBe(127);
    expect(withRefGeneration(link, 0)).toBe(ref);
    expect(decodeRef(link)).toEqual({ node: 2, client: 7, index: 1 });
    expect(refGeneration(withRefGeneration(ref, 128))).toBe(0);
  });
});
