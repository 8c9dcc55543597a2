import { summarizeVerdict } from '@lockfabric/check';
import type { ProtocolOptions } from '@lockfabric/locks-common';
import type { WorkloadSpec } from '@lockfabric/workloads';
import { describe, expect, it } from 'vitest';
import { simRun } from './support/sim-run.js';

const THRESHOLDS = [1, 2, 16, 'inf'] as const;

/** Seed → a hot workload with client crashes (a crashed client stops while holding), recovery through the memory node. */
function caseFor(seed: number): { spec: WorkloadSpec; options: ProtocolOptions; memoryNodes: number } {
  const spec: WorkloadSpec = {
    clients: 4 + (seed % 9),
    locks: 1 + ((seed >> 1) % 4),
    readRatio: [0.1, 0.5, 0.9][seed % 3]!,
    distribution: 'uniform',
    operations: 150 + ((seed * 29) % 101),
    thinkNs: (seed * 131) % 2_000,
    criticalSectionNs: (seed * 197) % 3_000,
    seed,
    ...(seed % 3 === 0 ? { timeoutMs: 0.3 } : {}),
  };
  const options: ProtocolOptions = {
    consecutiveWriters: THRESHOLDS[seed % THRESHOLDS.length]!,
    leaseNs: 50_000 + (seed % 4) * 0.05,
    ...(seed % 5 === 0 ? { recovery: 'one-sided' } : {}),
    ...(seed % 4 === 0 ? { eraBuckets: 4 } : {}),
  };
  return { spec, options, memoryNodes: 1 + (seed % 2) };
}

describe('sim sweep with client crashes: leases, RelCnt watching and era-fenced recovery', () => {
  for (let block = 0; block < 2; block++) {
    it(`seeds ${block * 100 + 1}–${block * 100 + 100}: no exclusion violation; every live client's acquire completes or fails typed`, async () => {
      let resets = 0;
      let crashes = 0;
      for (let seed = block * 100 + 1; seed <= block * 100 + 100; seed++) {
        const { spec, options, memoryNodes } = caseFor(seed);
        const result = await simRun({ spec, protocolOptions: options, crashProbability: 0.01, memoryNodes, jitterNs: 400 });
        const where = `seed ${seed} ${JSON.stringify(options)} memoryNodes=${memoryNodes}`;
        expect(result.verdict.ok, `${where}\n${summarizeVerdict(result.verdict)}`).toBe(true);
        expect(result.cutOff, where).toBe(false);
        for (const name of Object.keys(result.verdict.liveness.counts.acquireErrors)) expect(['LockTimeoutError'], where).toContain(name);
        // I14: each bucket's eras go up by one per reset; I13: no reset without a failure.
        const serverResets = result.servers.reduce((n, server) => n + server.stats.accepted, 0);
        const clientResets = options.recovery === 'one-sided' ? result.clients.reduce((n, c) => n + c.recoverer.stats.accepted, 0) : 0;
        if (result.crashed.size === 0) expect(serverResets + clientResets, where).toBe(0);
        for (const server of result.servers) {
          const eras = new Map<string, bigint>();
          for (const reset of server.stats.resets) {
            const key = String(reset.lock % 4);
            expect(reset.era > (eras.get(key) ?? 0n), where).toBe(true);
            eras.set(key, reset.era);
          }
        }
        resets += serverResets + clientResets;
        crashes += result.crashed.size;
      }
      expect(crashes).toBeGreaterThan(50);
      expect(resets).toBeGreaterThan(20);
    }, 60_000);
  }
});
