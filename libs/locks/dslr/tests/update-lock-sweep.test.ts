/**
 * Randomized runs with update locks (spec §10) mixed with shared and exclusive requests. The
 * history checker knows two modes, so an update hold is recorded as a shared hold until write
 * access and as an exclusive hold from then on: that checks update against writers and against
 * readers once it writes.
 */
import { describe, expect, it } from 'vitest';
import { HistoryRecorder, checkHistory, summarizeVerdict } from '@lockfabric/check';
import { clientKey } from '@lockfabric/ports';
import type { LockMode } from '@lockfabric/ports';
import { SeededRandom, createSimCluster } from '@lockfabric/sim';
import { createDslrClient, readDslrOptions } from '../src/index.js';
import type { DslrGrant } from '../src/index.js';

async function updateRun(seed: number, extra: Record<string, number | boolean> = {}) {
  const r = new SeededRandom(seed * 31 + 5);
  const clients = 4 + r.int(7);
  const locks = 1 + r.int(3);
  const crashes = r.next() < 0.4;
  const options = readDslrOptions({ updateLocks: true, leaseNs: 200_000, backoffCapNs: 100_000, ...(r.next() < 0.5 ? { counterLimit: 8 + r.int(24) } : {}), ...extra });
  const { cluster, scheduler } = createSimCluster({ seed, lockCount: locks, entryBytes: 8 });
  const clock = cluster.clock;
  const history = new HistoryRecorder();
  const failed: Record<string, number> = {};
  let updates = 0;
  let finished = 0;
  const loops = Array.from({ length: clients }, async (_, i) => {
    const ports = cluster.clientPorts({ node: cluster.computeNodeIds[i % 2]!, client: i });
    const name = clientKey(ports.self);
    const client = createDslrClient(ports, options);
    for (let op = 0; op < 40; op++) {
      const lock = ports.random.int(locks);
      const roll = ports.random.next();
      const kind = roll < 0.4 ? 'shared' : roll < 0.7 ? 'update' : 'exclusive';
      const first: LockMode = kind === 'exclusive' ? 'exclusive' : 'shared';
      history.invoke(name, 'acquire', lock, first, clock.nowNs());
      let grant: DslrGrant;
      try {
        grant = kind === 'update' ? await client.acquireUpdate(lock, { timeoutMs: 5 }) : await client.acquire(lock, kind, { timeoutMs: 5 });
      } catch (error) {
        history.fail(name, 'acquire', lock, first, clock.nowNs(), (error as Error).name);
        continue;
      }
      history.ok(name, 'acquire', lock, first, clock.nowNs());
      let held: LockMode = first;
      await clock.sleep(1_000 + ports.random.int(3_000));
      if (kind === 'update') {
        updates++;
        try {
          await client.awaitWriteAccess(grant, { timeoutMs: 5 });
          const nowNs = clock.nowNs();
          history.invoke(name, 'release', lock, 'shared', nowNs);
          history.ok(name, 'release', lock, 'shared', nowNs);
          history.invoke(name, 'acquire', lock, 'exclusive', nowNs);
          history.ok(name, 'acquire', lock, 'exclusive', nowNs);
          held = 'exclusive';
          await clock.sleep(1_000 + ports.random.int(2_000));
        } catch {
          // no write access: release the update lock as it is
        }
      }
      if (crashes && ports.random.next() < 0.03) {
        failed[name] = clock.nowNs();
        finished++;
        return;
      }
      history.invoke(name, 'release', lock, held, clock.nowNs());
      try {
        await client.release(grant);
        history.ok(name, 'release', lock, held, clock.nowNs());
      } catch (error) {
        history.fail(name, 'release', lock, held, clock.nowNs(), (error as Error).name);
      }
    }
    finished++;
  });
  await scheduler.run({ untilNs: 1_000_000_000 });
  void Promise.all(loops);
  return { verdict: checkHistory(history, { failedClients: failed }), updates, stuck: clients - finished };
}

describe('dslr: randomized runs with update locks', () => {
  it('80 seeds: no exclusion violation, every acquire completes or fails with a typed error', async () => {
    const problems: string[] = [];
    let updates = 0;
    for (let seed = 1; seed <= 80; seed++) {
      const run = await updateRun(seed);
      updates += run.updates;
      const errors = Object.keys(run.verdict.liveness.counts.acquireErrors).filter((e) => e !== 'LockAbortedError' && e !== 'LockTimeoutError');
      if (!run.verdict.ok || errors.length > 0 || run.stuck > 0) problems.push(`seed ${seed}: ${summarizeVerdict(run.verdict, 2)} ${errors.join(',')} stuck ${run.stuck}`);
    }
    expect(problems).toEqual([]);
    expect(updates).toBeGreaterThan(500);
  }, 120_000);

  it('the same runs catch the paper’s shared skip (A2): an exclusion violation', async () => {
    let caught = false;
    for (let seed = 1; seed <= 80 && !caught; seed++) caught = (await updateRun(seed, { paperLiteralSharedSkip: true })).verdict.exclusion.violationCount > 0;
    expect(caught).toBe(true);
  }, 120_000);
});
