import { caslock } from '@lockfabric/lock-caslock';
import { fisslock } from '@lockfabric/lock-fisslock';
import { describe, expect, it } from 'vitest';
import { runInMemory } from './in-memory-run.js';

// A cut node's process keeps running but nothing it sends or expects gets through until the heal:
// none of its clients is granted inside the cut, while the other nodes' clients go on.
const US = 1_000;
const cut = { node: 1, atNs: 200 * US, durationNs: 300 * US };
const spec = { clients: 6, locks: 3, readRatio: 0, distribution: 'uniform', operations: 600, thinkNs: 1 * US, criticalSectionNs: 2 * US, timeoutMs: 20, seed: 3 } as const;

function grantsInside(r: Awaited<ReturnType<typeof runInMemory>>, node: number, fromNs: number, toNs: number): number {
  return r.history.events().filter((e) => e.op === 'acquire' && e.phase === 'ok' && e.client.startsWith(`${node}/`) && e.timeNs > fromNs && e.timeNs < toNs).length;
}

describe('sim: a compute node cut off from the network', () => {
  it('caslock (verbs): no grant on the cut node inside the cut, grants elsewhere, safe and live after', async () => {
    const r = await runInMemory({ substrate: 'sim', protocol: caslock, spec, computeNodes: 2, partitions: [cut], heal: { budgetMs: 50 } });
    const [from, to] = [cut.atNs + 5 * US, cut.atNs + cut.durationNs];
    expect(grantsInside(r, 1, from, to)).toBe(0);
    // (A holder on the cut node cannot release its lock meanwhile, so the others slow down.)
    expect(grantsInside(r, 2, from, to)).toBeGreaterThan(0);
    // The cut node was granted again after the heal.
    expect(grantsInside(r, 1, to, Number.POSITIVE_INFINITY)).toBeGreaterThan(0);
    expect(r.verdict.ok).toBe(true);
    expect(r.heal?.stuck).toStrictEqual([]);
    // Without the cut the same seed grants on node 1 in that window: the zero above is the cut's doing.
    const uncut = await runInMemory({ substrate: 'sim', protocol: caslock, spec, computeNodes: 2 });
    expect(grantsInside(uncut, 1, from, to)).toBeGreaterThan(0);
  });

  it('fisslock (switch): packets into the cut are lost, so the cut node is not granted inside it either, and is after', async () => {
    const r = await runInMemory({ substrate: 'sim', protocol: fisslock, spec, computeNodes: 2, partitions: [cut], switchLinks: 'fifo' });
    expect(grantsInside(r, 1, cut.atNs + 5 * US, cut.atNs + cut.durationNs)).toBe(0);
    expect(grantsInside(r, 1, cut.atNs + cut.durationNs, Number.POSITIVE_INFINITY)).toBeGreaterThan(0);
    expect(r.verdict.violations).toStrictEqual([]);
  });
});
