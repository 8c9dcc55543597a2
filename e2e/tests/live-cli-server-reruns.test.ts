import { describe, expect, it } from 'vitest';
import { liveClusterForSuite } from './live-cluster.js';
import { runCli } from './cli.js';

// rpc and traditional keep their lock server in the memory node for the process's life, across
// runs; each run's clients restart their request ids at 1. Two benches back to back on one cluster
// of separate processes, each warmed up (a run of its own), so the server sees four runs in a row.
// Before the run boundary (issue 13) every run after the first timed its acquires out.

interface BenchJson {
  readonly acquires: number;
  readonly violations: number;
  readonly livenessViolations: number;
  readonly warmUp?: { readonly operations: number; readonly acquires: number; readonly violations: number };
}

const OPERATIONS = 400;
const WARMUP = 200;

describe('lockfabric bench --substrate live: the memory node lock server across runs', () => {
  const cluster = liveClusterForSuite({ withSwitch: false, withCoordinator: false });

  const bench = async (protocol: string): Promise<BenchJson> => {
    // No acquire timeout: every acquire of a run the server takes for stale would wait for ever (the
    // test times out), and none can fail for a slow machine. Releases retry for longer than a stall.
    const args = ['bench', '--substrate', 'live', '--cluster-dir', cluster().dir, '--protocol', protocol, '--clients', '4', '--locks', '16', '--read-ratio', '0.3', '--opt', 'maxAttempts=1000'];
    const { code, stdout, stderr } = await runCli([...args, '--operations', String(OPERATIONS), '--warmup-ops', String(WARMUP), '--floor-ops', '0', '--json']);
    expect(code, stderr).toBe(0);
    return JSON.parse(stdout) as BenchJson;
  };

  for (const protocol of ['rpc', 'traditional']) {
    it(`${protocol}: two benches, each after a warm-up, all complete with a passing verdict`, async () => {
      for (const round of [1, 2]) {
        const r = await bench(protocol);
        const where = `${protocol} bench ${round}`;
        expect(r.warmUp, where).toEqual({ operations: WARMUP, acquires: WARMUP, violations: 0 });
        // every acquire of the run was granted (an operation counts its failed attempt too)
        expect(r.acquires, where).toBe(OPERATIONS);
        expect(r.violations, where).toBe(0);
        expect(r.livenessViolations, where).toBe(0);
      }
    }, 300_000);
  }
});
