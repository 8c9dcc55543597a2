import { summarizeVerdict } from '@lockfabric/check';
import { protocolById } from '@lockfabric/lock-catalog';
import { btreeMaxNodes } from '@lockfabric/workloads';
import type { BTreeSpec, ObjectStoreSpec, WorkloadSpec } from '@lockfabric/workloads';
import { describe, expect, it } from 'vitest';
import { runInMemory } from './in-memory-run.js';

const ZIPF = { zipf: 0.99 } as const;

function objectSpec(app: ObjectStoreSpec, over: Partial<WorkloadSpec> = {}): WorkloadSpec {
  return { clients: 32, locks: app.objects, readRatio: 0, distribution: ZIPF, operations: 2_000, thinkNs: 0, criticalSectionNs: 0, seed: 3, application: app, ...over };
}

function treeSpec(app: BTreeSpec, over: Partial<WorkloadSpec> = {}): WorkloadSpec {
  const operations = over.operations ?? 3_000;
  return { clients: 64, locks: btreeMaxNodes(app, operations), readRatio: 0, distribution: ZIPF, operations, thinkNs: 0, criticalSectionNs: 0, seed: 7, application: app, ...over };
}

describe('DecLock object store on sim', () => {
  const store: ObjectStoreSpec = { kind: 'objectstore', objects: 200, objectBytes: 414, getRatio: 0.65 };

  it('each operation is one lock plus one data verb; the exclusion and content checks pass', async () => {
    const result = await runInMemory({ substrate: 'sim', protocol: protocolById('caslock'), spec: objectSpec(store) });
    expect(result.verdict.ok, summarizeVerdict(result.verdict)).toBe(true);
    const app = result.application!;
    expect(app.check.kind).toBe('objectstore');
    expect(app.check.result.ok, app.check.result.problems.join('\n')).toBe(true);
    expect(app.log.ops).toBe(2_000);
    // One READ per get and one WRITE per set, nothing else from the application.
    expect(app.log.dataVerbs.read).toBe(app.log.opsByKind['get']);
    expect(app.log.dataVerbs.write).toBe(app.log.opsByKind['set']);
    // The memory node served the data verbs as well as the lock verbs.
    expect(result.verbs['read'] ?? 0).toBeGreaterThanOrEqual(app.log.dataVerbs.read);
    expect(result.verbs['write'] ?? 0).toBeGreaterThanOrEqual(app.log.dataVerbs.write);
  }, 60_000);

  it('mutant: sets that skip their lock are caught by the content check (reads of writes still in flight)', async () => {
    const result = await runInMemory({ substrate: 'sim', protocol: protocolById('caslock'), spec: objectSpec({ ...store, objects: 20, mutantSkipLock: true }, { locks: 20 }) });
    // The lock history alone cannot see it: the sets never asked for their locks.
    expect(result.verdict.ok, summarizeVerdict(result.verdict)).toBe(true);
    const check = result.application!.check;
    expect(check.kind).toBe('objectstore');
    expect(check.result.ok).toBe(false);
    if (check.kind === 'objectstore') expect(check.result.counts.uncommitted).toBeGreaterThan(0);
  }, 60_000);
});

describe('Sherman-style B+tree on sim', () => {
  const tree: BTreeSpec = { kind: 'btree', keys: 2_000, fanout: 8, lookupRatio: 0, insertRatio: 1 };

  for (const protocol of ['caslock', 'declock']) {
    it(`${protocol}: after concurrent inserts from 64 clients the tree is well-formed and holds every committed key`, async () => {
      const result = await runInMemory({ substrate: 'sim', protocol: protocolById(protocol), spec: treeSpec(tree) });
      expect(result.verdict.ok, summarizeVerdict(result.verdict)).toBe(true);
      const app = result.application!;
      expect(app.check.kind).toBe('btree');
      if (app.check.kind !== 'btree') return;
      expect(app.check.result.problems).toEqual([]);
      expect(app.log.ops).toBe(3_000);
      expect(app.log.committedKeys.length).toBe(3_000);
      // The inserts made the tree split and grow; every key is a leaf key once.
      expect(app.log.tree.splits).toBeGreaterThan(50);
      expect(app.check.result.keys).toBe(new Set([...app.log.committedKeys, ...Array.from({ length: 2_000 }, (_, i) => (i + 1) * 65_536)]).size);
    }, 120_000);
  }

  it('mutant: a split that gives up the node lock before writing the halves is caught by the structural check', async () => {
    const result = await runInMemory({ substrate: 'sim', protocol: protocolById('caslock'), spec: treeSpec({ ...tree, mutantUnlockedSplit: true }) });
    const check = result.application!.check;
    expect(check.kind).toBe('btree');
    expect(check.result.ok).toBe(false);
  }, 120_000);
});
