import { losingFirstCompletion, lostEnqueueScenario } from '@lockfabric/harness';
import type { ProtocolOptions } from '@lockfabric/locks-common';
import { describe, expect, it } from 'vitest';
import { rmaRw } from '../src/index.js';

/**
 * Writer P holds lock 0. Writer C enqueues on lock 0, but the completion of its first masked CAS
 * (the MCS enqueue swap) is lost, so its acquire fails although C's queue node is now lock 0's
 * tail. C then takes lock 1 with the same queue node. Writer W enqueues on lock 0 behind C's node
 * and links into it; C releases lock 1 (`lostEnqueueScenario`). Afterwards P asks lock 1 shared.
 */
const scenario = (options: ProtocolOptions) =>
  lostEnqueueScenario({ protocol: rmaRw, options, loseEnqueue: (ports) => losingFirstCompletion(ports, 'maskedCas'), lock1AgainMode: 'shared', maxEvents: 200_000 });

describe('rma-rw: an enqueue swap whose completion was lost (live stream break)', () => {
  it('the writer linked behind the lost node is never handed a lock it does not own: exclusion holds, both locks are free again', async () => {
    const { outcome, verdict } = await scenario({});
    expect(outcome.cFailed).toBe(true);
    expect(verdict.violations).toEqual([]);
    // W waited behind a node nobody will hand the lock from, so it timed out; P's release cut the queue.
    expect(outcome.wGranted).toBe(false);
    expect(outcome).toMatchObject({ lock1Again: true, lock0Again: true });
  });

  it('mutant: the node reused under the same link generation hands lock 0 to the writer behind the lost enqueue, beside its holder', async () => {
    const { outcome, verdict } = await scenario({ mutantReuseAfterFailedSwap: true });
    expect(outcome.wGranted).toBe(true);
    expect(verdict.violations.map((v) => v.lock)).toEqual([0]);
  });

  it('mutant: a stale link taken for a successor keeps lock 1 in a writer phase with no writer, so readers never get in', async () => {
    const { outcome, verdict } = await scenario({ mutantRawSuccessorCheck: true });
    expect(verdict.violations).toEqual([]);
    expect(outcome).toMatchObject({ lock1Again: false, lock0Again: true });
  });
});

