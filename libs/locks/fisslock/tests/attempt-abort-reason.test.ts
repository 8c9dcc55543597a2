import { afterEach, describe, expect, it, vi } from 'vitest';
import { runSeed } from './support/sweep.js';

// Each FissLock attempt ends its T_ACQ timer by aborting a controller. Aborted without a reason,
// Node builds a DOMException (with a stack trace) every time: about 4 µs of processor time per
// acquire on the live compute node, one of its top frames in a CPU profile of an uncontended run.
describe('fisslock attempt timer', () => {
  afterEach(() => vi.restoreAllMocks());

  it('is ended with a reason: no reason-less abort (no DOMException) per acquire', async () => {
    const original = AbortController.prototype.abort;
    let withReason = 0;
    let withoutReason = 0;
    vi.spyOn(AbortController.prototype, 'abort').mockImplementation(function (this: AbortController, ...args: unknown[]) {
      if (args.length === 0 || args[0] === undefined) withoutReason++;
      else withReason++;
      return original.apply(this, args as [unknown]);
    });
    const r = await runSeed(1, { ops: 8 });
    expect(r.failed + r.untyped).toBe(0);
    expect(withReason).toBeGreaterThan(0);
    expect(withoutReason).toBe(0);
  }, 60_000);
});
