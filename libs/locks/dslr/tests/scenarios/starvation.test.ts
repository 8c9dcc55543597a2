/** Spec §14.4 scenario 11: a writer facing an endless stream of readers. */
import { describe, expect, it } from 'vitest';
import { caslock } from '@lockfabric/lock-caslock';
import type { LockClient } from '@lockfabric/ports';
import { Scenario } from '../support/scenario.js';

const US = 1_000;

/** Four readers re-acquire back to back for 2 ms; a writer arrives at 20 µs. Returns the writer's wait. */
async function writerAmongReaders(make: (s: Scenario) => LockClient): Promise<{ granted: boolean; waitNs: number }> {
  const s = new Scenario();
  const clock = s.cluster.clock;
  for (let i = 0; i < 4; i++) {
    const reader = make(s);
    s.at(i * 3 * US, async () => {
      while (clock.nowNs() < 2_000 * US) {
        const grant = await reader.acquire(0, 'shared', { timeoutMs: 5 });
        await clock.sleep(10 * US);
        await reader.release(grant);
      }
    });
  }
  const writer = make(s);
  const outcome = s.at(20 * US, async () => {
    try {
      const grant = await writer.acquire(0, 'exclusive', { timeoutMs: 1 });
      const waitNs = clock.nowNs() - 20 * US;
      await writer.release(grant);
      return { granted: true, waitNs };
    } catch {
      return { granted: false, waitNs: clock.nowNs() - 20 * US };
    }
  });
  await s.run();
  return outcome;
}

describe('dslr: starvation freedom against a stream of readers', () => {
  it('DSLR grants the writer once the readers already ahead of it are done', async () => {
    const result = await writerAmongReaders((s) => s.client());
    expect(result.granted).toBe(true);
    expect(result.waitNs).toBeLessThan(30 * US);
  });

  it('the reader-preferring CAS lock starves the same writer until its timeout', async () => {
    const result = await writerAmongReaders((s) => caslock.createClient(s.ports(), { variant: 'rw' }));
    expect(result.granted).toBe(false);
  });
});
