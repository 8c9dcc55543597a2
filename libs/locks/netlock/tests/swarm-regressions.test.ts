import { describe, expect, it } from 'vitest';
import { runSwarmSeed } from '@lockfabric/harness';
import { netlock } from '../src/index.js';

// Swarm seed 478 (a coordinator crash, delayed ingress packets, jitter): a reader's CONTINUE notify
// was overtaken by its own RELEASE; by the time it reached the switch a writer held its slot, and
// the switch granted the reader behind that writer. The notify now carries its entry's serial.
describe('netlock: a stale CONTINUE notify', () => {
  it('seed 478 is safe and live after healing', async () => {
    const r = await runSwarmSeed(netlock, 478);
    expect(r.description).toMatch(/switch=ingress\(.*delay=0\.0\d+/);
    expect(r.failure, r.failure?.detail).toBeUndefined();
  });

  it('mutant: without the serial check the same seed overlaps a reader and a writer', async () => {
    const r = await runSwarmSeed(netlock, 478, { mutantUncheckedNotify: true });
    expect(r.failure?.kind).toBe('safety');
    expect(r.failure?.detail).toMatch(/shared .* overlaps .* exclusive/);
  });
});
