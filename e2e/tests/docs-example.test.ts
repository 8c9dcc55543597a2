import { describe, expect, it } from 'vitest';
// docs/examples is no project: the README's example is run from where the README links it.
// eslint-disable-next-line @nx/enforce-module-boundaries
import { twoClientsOneLock } from '../../docs/examples/lock-client.js';

// The README's TypeScript example, compiled by the e2e typecheck and run here.
describe('docs/examples/lock-client.ts', () => {
  it('gives lock 3 to both clients, one after the other', async () => {
    const holds = await twoClientsOneLock('dslr', 7);
    expect(holds.map((h) => h.name).sort()).toEqual(['alice', 'bob']);
    const [first, second] = [...holds].sort((a, b) => a.fromNs - b.fromNs);
    expect(second!.fromNs).toBeGreaterThanOrEqual(first!.toNs);
  });

  it('the overlap check catches a broken lock (mutant: caslock without compare-and-swap)', async () => {
    let overlapped = 0;
    for (let seed = 1; seed <= 20; seed += 1) {
      const holds = await twoClientsOneLock('caslock', seed, { mutantSkipCompare: true });
      const [first, second] = [...holds].sort((a, b) => a.fromNs - b.fromNs);
      if (second!.fromNs < first!.toNs) overlapped += 1;
    }
    expect(overlapped).toBeGreaterThan(0);
  });
});
