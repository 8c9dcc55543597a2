import { losingFirstCompletion, lostEnqueueScenario } from '@lockfabric/harness';
import type { ProtocolOptions } from '@lockfabric/locks-common';
import { describe, expect, it } from 'vitest';
import { alock } from '../src/index.js';

/**
 * P holds lock 0. C enqueues on lock 0, but the answer to its CAS on the cohort tail (the first
 * CAS of C's that succeeds) is lost, so its acquire fails although C's descriptor is now lock 0's
 * tail. C then takes lock 1 with the same descriptor. W enqueues on lock 0 behind C's descriptor
 * and links into it; C releases lock 1, then P releases lock 0 (`lostEnqueueScenario`).
 */
const scenario = (options: ProtocolOptions) =>
  lostEnqueueScenario({
    protocol: alock,
    options,
    loseEnqueue: (ports) => losingFirstCompletion(ports, 'cas', (args, old) => old === args[1]),
    lock1AgainMode: 'exclusive',
    jitterNs: 0,
    maxEvents: 500_000,
  });

describe('alock: an enqueue CAS whose answer was lost (flushed queue pair)', () => {
  it('the writer linked behind the lost descriptor is never handed a lock it does not own; both locks are free again', async () => {
    const { outcome, verdict } = await scenario({});
    expect(outcome.cFailed).toBe(true);
    expect(verdict.violations).toEqual([]);
    expect(outcome.wGranted).toBe(false);
    expect(outcome).toMatchObject({ lock0Again: true, lock1Again: true });
  });

  it('mutant: the descriptor reused under the same generation hands lock 0 to the client behind the lost enqueue, beside its holder', async () => {
    const { outcome, verdict } = await scenario({ mutantReuseAfterFailedSwap: true });
    expect(outcome.wGranted).toBe(true);
    expect(verdict.violations.map((v) => v.lock)).toEqual([0]);
  });
});
