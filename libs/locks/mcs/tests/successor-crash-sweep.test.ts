import { HistoryRecorder, checkHistory } from '@lockfabric/check';
import { clientKey } from '@lockfabric/ports';
import type { LockClient } from '@lockfabric/ports';
import { createSimCluster } from '@lockfabric/sim';
import { describe, expect, it } from 'vitest';
import { decodePointer, mcs } from '../src/index.js';
import type { McsGrant } from '../src/index.js';
import { dyingPorts } from '@lockfabric/testkit';

const SEEDS = 40;
/** Per seed; a fixed run needs well under a tenth of it. */
const EVENT_BUDGET = 400_000;

/**
 * One seeded run: a few clients loop over 1–3 hot locks on `sim` (with jitter); one of them dies
 * right after its n-th tail swap that found a predecessor, i.e. after joining a queue and before
 * linking in; with `stopNs` it is only stopped that long (SIGSTOP, then SIGCONT) and links late.
 * Every survivor's history goes to the checker (the stopped client's too: it never failed).
 */
async function run(seed: number, protocolOptions: Record<string, number | boolean> = {}, stopNs?: number) {
  const { cluster, scheduler } = createSimCluster({ seed, lockCount: 4, entryBytes: mcs.entryBytes, computeNodes: 3 });
  const random = cluster.config.random;
  const clients = 4 + random.int(5);
  const locks = 1 + random.int(3);
  const operations = 20 + random.int(20);
  const victim = random.int(clients);
  const dieAtSwap = 1 + random.int(3);
  const history = new HistoryRecorder();
  let swaps = 0;
  let diedAtNs: number | undefined;
  let liveDone = 0;
  const loops = Array.from({ length: clients }, async (_, index) => {
    const node = cluster.computeNodeIds[index % cluster.computeNodeIds.length]!;
    let ports = cluster.clientPorts({ node, client: index });
    let died: Promise<number> | undefined;
    if (index === victim) {
      const dying = dyingPorts(ports, (verb, _args, result) => verb === 'maskedCas' && decodePointer(result as bigint) !== undefined && ++swaps === dieAtSwap, stopNs);
      ports = dying.ports;
      died = dying.died.then((atNs) => (diedAtNs = atNs));
    }
    // Two queue nodes per client: the schedules this sweep was built on (see sim-sweep.test.ts).
    const client = mcs.createClient(ports, { pollIntervalNs: 500, releaseLinkTimeoutNs: 500_000, queueNodes: 2, ...protocolOptions }) as LockClient<McsGrant>;
    const key = clientKey(ports.self);
    const now = () => cluster.clock.nowNs();
    const loop = (async () => {
      for (let op = 0; op < operations; op++) {
        const lock = random.int(locks);
        history.invoke(key, 'acquire', lock, 'exclusive', now());
        let grant: McsGrant;
        try {
          grant = await client.acquire(lock, 'exclusive', { timeoutMs: 2 });
        } catch (error) {
          history.fail(key, 'acquire', lock, 'exclusive', now(), (error as Error).name);
          continue;
        }
        history.ok(key, 'acquire', lock, 'exclusive', now());
        await cluster.clock.sleep(500 + random.int(3_000));
        history.invoke(key, 'release', lock, 'exclusive', now());
        await client.release(grant);
        history.ok(key, 'release', lock, 'exclusive', now());
        await cluster.clock.sleep(random.int(2_000));
      }
    })();
    // A stopped client resumes, so its loop runs to the end like everyone else's.
    await (died && stopNs === undefined ? Promise.race([loop, died]) : loop);
    liveDone++;
  });
  const settled = Promise.allSettled(loops);
  const outcome = await scheduler.run({ stop: () => liveDone === clients, maxEvents: EVENT_BUDGET });
  const results = liveDone === clients ? await settled : [];
  const failedClients = new Map<string, number>();
  if (diedAtNs !== undefined && stopNs === undefined) failedClients.set(clientKey({ node: cluster.computeNodeIds[victim % cluster.computeNodeIds.length]!, client: victim }), diedAtNs);
  const verdict = checkHistory(history, { failedClients });
  const acquiredAfterDeath = diedAtNs === undefined ? 0 : history.events().filter((e) => e.op === 'acquire' && e.phase === 'ok' && e.timeNs > diedAtNs! + 500_000).length;
  const victimErrors = history.events().filter((e) => e.client === clientKey({ node: cluster.computeNodeIds[victim % cluster.computeNodeIds.length]!, client: victim }) && e.phase === 'fail').length;
  return { outcome, finished: liveDone === clients, verdict, victimErrors, died: diedAtNs !== undefined, acquiredAfterDeath, rejected: results.filter((r) => r.status === 'rejected') };
}

describe('mcs: sweep with a successor that dies between its swap and its link', () => {
  it(`${SEEDS} seeds: releases return, only typed errors, exclusion holds, survivors acquire after the death`, async () => {
    let deaths = 0;
    let seedsWithProgress = 0;
    for (let seed = 1; seed <= SEEDS; seed++) {
      const r = await run(seed);
      const where = `seed ${seed}`;
      expect(r.finished, where).toBe(true);
      expect(r.outcome.reason, where).not.toBe('max-events');
      expect(r.rejected, where).toEqual([]);
      expect(r.verdict.violations, where).toEqual([]);
      expect(r.verdict.liveness.ok, where).toBe(true);
      expect(Object.keys(r.verdict.liveness.counts.acquireErrors).filter((name) => name !== 'LockTimeoutError'), where).toEqual([]);
      if (r.died) deaths++;
      if (r.acquiredAfterDeath > 0) seedsWithProgress++;
    }
    expect(deaths).toBeGreaterThan(SEEDS / 2);
    expect(seedsWithProgress).toBeGreaterThan(SEEDS / 2);
  }, 120_000);

  it(`${SEEDS} seeds with the client only stopped for 1–3 ms: it links late, times out typed, exclusion holds`, async () => {
    let victimTimeouts = 0;
    for (let seed = 1; seed <= SEEDS; seed++) {
      const r = await run(seed, {}, 1_000_000 + (seed % 3) * 1_000_000);
      const where = `seed ${seed}`;
      expect(r.finished, where).toBe(true);
      expect(r.outcome.reason, where).not.toBe('max-events');
      expect(r.rejected, where).toEqual([]);
      expect(r.verdict.violations, where).toEqual([]);
      expect(r.verdict.liveness.violations, where).toEqual([]);
      expect(Object.keys(r.verdict.liveness.counts.acquireErrors).filter((name) => name !== 'LockTimeoutError'), where).toEqual([]);
      victimTimeouts += r.victimErrors;
    }
    expect(victimTimeouts).toBeGreaterThanOrEqual(SEEDS);
  }, 120_000);

  it('mutant: with the old unbounded wait some seed hangs, caught by the event budget', async () => {
    let caught: number | undefined;
    for (let seed = 1; seed <= 10 && caught === undefined; seed++) {
      const r = await run(seed, { mutantUnboundedReleaseWait: true });
      if (r.outcome.reason === 'max-events') caught = seed;
    }
    expect(caught).toBeDefined();
  }, 60_000);
});
