import { runInMemory } from '@lockfabric/harness';
import { afterEach, describe, expect, it } from 'vitest';
import { declock } from '../src/index.js';

const Original = globalThis.AbortController;
let made = 0;

/** Counts every AbortController built while installed (test-only; restored after each test). */
function countAbortControllers(): void {
  made = 0;
  globalThis.AbortController = class extends Original {
    constructor() {
      super();
      made++;
    }
  };
}

afterEach(() => {
  globalThis.AbortController = Original;
});

async function controllersFor(operations: number): Promise<number> {
  countAbortControllers();
  const result = await runInMemory({
    substrate: 'sim',
    protocol: declock,
    spec: { clients: 16, locks: 4, readRatio: 0.5, distribution: 'uniform', operations, thinkNs: 0, criticalSectionNs: 0, seed: 5 },
  });
  expect(result.verdict.ok).toBe(true);
  expect(result.summary.acquires).toBe(operations);
  return made;
}

describe('DecLock builds no AbortController per lock operation', () => {
  it('counts one it is shown (the wrap can fail)', () => {
    countAbortControllers();
    new AbortController().abort('x');
    expect(made).toBe(1);
  });

  it('builds as many for 800 operations as for 100: only the run and node set-up ones', async () => {
    const few = await controllersFor(100);
    const many = await controllersFor(800);
    expect(many).toBe(few);
    expect(few).toBeLessThan(16);
  });
});
