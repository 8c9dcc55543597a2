/**
 * Spec I4 (conservation): once a crash-free run is quiescent, every lock word has released exactly
 * what it issued (nX == maxX, nS == maxS) or was reset to 0 — no lost release, no bounce increment
 * left behind, no ticket of a timed-out waiter left unreleased (A16), whatever the resets.
 */
import { describe, expect, it } from 'vitest';
import { HistoryRecorder, checkHistory } from '@lockfabric/check';
import { createSimCluster } from '@lockfabric/sim';
import { RunStats, runClients } from '@lockfabric/workloads';
import { WordLayout, dslr, drained, formatCounters } from '../src/index.js';
import { swarmCase } from '@lockfabric/harness';
import type { SwarmCase } from '@lockfabric/harness';

async function quiescentWords(swarm: SwarmCase): Promise<{ words: string[]; ok: boolean; timeouts: number }> {
  const { spec } = swarm;
  const { cluster, scheduler } = createSimCluster({ seed: spec.seed, lockCount: spec.locks, entryBytes: dslr.entryBytes });
  const ports = Array.from({ length: spec.clients }, (_, i) => cluster.clientPorts({ node: cluster.computeNodeIds[i % cluster.computeNodeIds.length]!, client: i }));
  const recorder = new HistoryRecorder();
  const run = runClients({ protocol: dslr, protocolOptions: swarm.options, spec, ports, recorder, stats: new RunStats(), clock: cluster.clock });
  await scheduler.run();
  await run;
  const layout = WordLayout.of('standard', Number(swarm.options['counterLimit'] ?? 32768));
  const table = cluster.layout.memoryNodes[0]!;
  const memory = cluster.node(table.node).memory;
  const words: string[] = [];
  for (let lock = 0; lock < spec.locks; lock++) {
    const counters = layout.decode(memory.cpuLoad({ ...table, offset: table.baseOffset + lock * 8 }));
    if (!drained(counters)) words.push(`lock ${lock}: ${formatCounters(counters, layout)}`);
  }
  const verdict = checkHistory(recorder);
  return { words, ok: verdict.ok, timeouts: verdict.liveness.counts.acquireErrors['LockTimeoutError'] ?? 0 };
}

describe('dslr: conservation at quiescence (I4)', () => {
  it('every word is drained after crash-free runs, with resets, multi-slot tickets and timed-out waiters', async () => {
    const leftovers: string[] = [];
    let timeouts = 0;
    let runs = 0;
    for (let seed = 1; runs < 60; seed++) {
      const swarm = swarmCase(seed);
      if (swarm.crashProbability > 0) continue;
      runs++;
      const result = await quiescentWords(swarm);
      timeouts += result.timeouts;
      if (!result.ok || result.words.length > 0) leftovers.push(`seed ${seed}: ${result.ok ? '' : 'verdict failed '}${result.words.join(', ')}`);
    }
    expect(leftovers).toEqual([]);
    expect(timeouts).toBeGreaterThan(0);
  }, 120_000);

  it('the check fails when a release is lost (abandoned tickets of timed-out waiters, A16 paper-literal)', async () => {
    let found = false;
    for (let seed = 1; seed <= 60 && !found; seed++) {
      const swarm = swarmCase(seed, { paperLiteralAbandonTicket: true });
      if (swarm.crashProbability > 0 || swarm.spec.timeoutMs! > 1) continue;
      found = (await quiescentWords(swarm)).words.length > 0;
    }
    expect(found).toBe(true);
  }, 120_000);
});
