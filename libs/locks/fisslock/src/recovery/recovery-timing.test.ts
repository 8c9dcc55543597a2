import { describe, expect, it } from 'vitest';
import { timeFissLockRecovery as timeWith } from './recovery-timing.js';

const timeFissLockRecovery = (heldLocks: number, machines: number) => timeWith(heldLocks, machines, () => performance.now() * 1e6);

describe('timeFissLockRecovery', () => {
  it('recovers the planted state without problems and keeps exactly the survivors\' locks', async () => {
    const t = await timeFissLockRecovery(1_000, 8);
    expect(t.problems).toBe(0);
    // Machine 8 fails: it is the only holder of the exclusive locks it homes (lid % 8 = 7) and
    // nobody waits for them; every other lock keeps an agent on a survivor.
    expect(t.agentsAfter).toBe(1_000 - 125);
    expect(t.registersWritten).toBeGreaterThan(t.agentsAfter);
    for (const ms of [t.s1Ms, t.s2Ms, t.s3Ms]) expect(ms).toBeGreaterThanOrEqual(0);
  });

  it('writes registers in proportion to the held locks', async () => {
    const small = await timeFissLockRecovery(1_000, 8);
    const large = await timeFissLockRecovery(8_000, 8);
    expect(large.agentsAfter).toBe(8 * small.agentsAfter);
    expect(large.registersWritten - 8 * small.registersWritten).toBeLessThanOrEqual(8 * 16);
  });
});
