import { describe, expect, it } from 'vitest';
import { runInMemory } from '../src/run/in-memory.js';
import type { WorkloadSpec } from '@lockfabric/workloads';

const hot: WorkloadSpec = {
  clients: 16,
  locks: 4,
  readRatio: 0,
  distribution: 'uniform',
  operations: 400,
  thinkNs: 500,
  criticalSectionNs: 2_000,
  seed: 7,
  timeoutMs: 50,
};

describe('sim: caslock end to end', () => {
  it('the correct lock passes the checker under contention, in both variants', async () => {
    for (const variant of ['exclusive', 'rw']) {
      const result = await runInMemory({ substrate: 'sim', protocol: 'caslock', protocolOptions: { variant }, spec: { ...hot, readRatio: 0.5 } });
      expect(result.verdict.violations).toEqual([]);
      expect(result.verdict.ok).toBe(true);
      expect(result.summary.acquires).toBeGreaterThan(300);
      expect(result.cutOff).toBe(false);
    }
  });

  it('the mutant that skips the compare is caught by the exclusion checker', async () => {
    const result = await runInMemory({ substrate: 'sim', protocol: 'caslock', protocolOptions: { mutantSkipCompare: true }, spec: hot });
    expect(result.verdict.violations.length).toBeGreaterThan(0);
    expect(result.verdict.ok).toBe(false);
  });

  it('is deterministic: same seed, same history digest; another seed, another digest', async () => {
    const a = await runInMemory({ substrate: 'sim', protocol: 'caslock', spec: hot });
    const b = await runInMemory({ substrate: 'sim', protocol: 'caslock', spec: hot });
    const c = await runInMemory({ substrate: 'sim', protocol: 'caslock', spec: { ...hot, seed: 8 } });
    expect(a.digest).toBe(b.digest);
    expect(a.verbs).toEqual(b.verbs);
    expect(c.digest).not.toBe(a.digest);
  });
});

describe('sim: the local-vs-remote atomicity gap (ALock Table 1)', () => {
  const spec: WorkloadSpec = { ...hot, clients: 8, locks: 1, operations: 300, criticalSectionNs: 300, thinkNs: 200 };

  it('a lock mixing local CPU CAS and remote CAS on one word violates exclusion within a few seeds', async () => {
    let violatingSeed: number | undefined;
    for (let seed = 1; seed <= 20 && violatingSeed === undefined; seed++) {
      const result = await runInMemory({ substrate: 'sim', protocol: 'caslock', protocolOptions: { localAtomics: 'cpu' }, colocatedClients: 4, spec: { ...spec, seed } });
      if (result.verdict.violations.length > 0) violatingSeed = seed;
    }
    expect(violatingSeed).toBeDefined();
  });

  it('the same lock with only remote atomics never does', async () => {
    for (let seed = 1; seed <= 20; seed++) {
      const result = await runInMemory({ substrate: 'sim', protocol: 'caslock', protocolOptions: { localAtomics: 'nic' }, colocatedClients: 4, spec: { ...spec, seed } });
      expect(result.verdict.violations, `seed ${seed}`).toEqual([]);
    }
  });
});

describe('embedded: caslock', () => {
  it('runs the same code in real time and passes the checker', async () => {
    const result = await runInMemory({ substrate: 'embedded', protocol: 'caslock', spec: { ...hot, operations: 200, timeoutMs: 2_000 } });
    expect(result.verdict.ok).toBe(true);
    expect(result.summary.acquires).toBe(200);
  });
});
