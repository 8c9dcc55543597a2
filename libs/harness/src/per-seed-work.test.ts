import { protocolById } from '@lockfabric/lock-catalog';
import type { WorkloadSpec } from '@lockfabric/workloads';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runInMemory } from './in-memory-run.js';
import { runSwarmSeed } from './swarm/run.js';

// A swarm seed's fixed work is most of its cost (a seed simulates only a few thousand events):
// what no caller of the swarm reads must not be paid for per seed. Counted, never timed.
const spec: WorkloadSpec = { clients: 4, locks: 2, readRatio: 0, distribution: 'uniform', operations: 40, thinkNs: 0, criticalSectionNs: 500, seed: 5 };

describe('per-seed fixed work', () => {
  afterEach(() => vi.restoreAllMocks());

  it('a swarm seed reads no processor time and starts no real-time timer', async () => {
    const cpu = vi.spyOn(process, 'cpuUsage');
    const timers = vi.spyOn(globalThis, 'setInterval');
    const result = await runSwarmSeed(protocolById('caslock'), 7);
    expect(result.failure?.detail).toBeUndefined();
    expect(cpu).toHaveBeenCalledTimes(0);
    expect(timers).toHaveBeenCalledTimes(0);
  }, 60_000);

  it('a run that asks for them gets cpuMs (two readings) and its progress timer', async () => {
    const cpu = vi.spyOn(process, 'cpuUsage');
    const timers = vi.spyOn(globalThis, 'setInterval');
    const plain = await runInMemory({ substrate: 'sim', protocol: protocolById('caslock'), spec });
    expect(plain.cpuMs).toBeUndefined();
    expect(cpu).toHaveBeenCalledTimes(0);
    const fractions: number[] = [];
    const measured = await runInMemory({ substrate: 'sim', protocol: protocolById('caslock'), spec, measureCpu: true, onProgress: (f) => fractions.push(f) });
    expect(cpu).toHaveBeenCalledTimes(2);
    expect(measured.cpuMs).toBeGreaterThanOrEqual(0);
    expect(timers).toHaveBeenCalledTimes(1);
    expect(fractions.at(-1)).toBe(1);
    // Measuring changes nothing the simulation does.
    expect(measured.digest).toBe(plain.digest);
  }, 60_000);
});
