import { describe, expect, it } from 'vitest';
import type { WorkloadSpec } from '@lockfabric/workloads';
import { runInMemory } from '../src/run/in-memory.js';
import { LIVE_PROTOCOL_DEFAULTS, substrateOptions } from '../src/run/live-defaults.js';

// `embedded` runs on wall-clock timers. With FissLock's sim-sized timers (RTO 200 µs, T_ACQ 10 ms)
// a busy event loop makes every attempt look lost: the run resent and aborted without end.
const spec: WorkloadSpec = { clients: 6, locks: 4, readRatio: 0.4, distribution: 'uniform', operations: 200, thinkNs: 0, criticalSectionNs: 0, seed: 3, timeoutMs: 5_000 };

describe('embedded: a run starts from the real-time protocol defaults', () => {
  it('sim keeps the protocol’s own defaults; embedded and live take the live ones; --opt wins', () => {
    expect(substrateOptions('sim', 'fisslock', { rtoNs: '7' })).toEqual({ rtoNs: '7' });
    expect(substrateOptions('embedded', 'fisslock')).toEqual(LIVE_PROTOCOL_DEFAULTS['fisslock']);
    expect(substrateOptions('embedded', 'fisslock', { rtoNs: '7' })).toMatchObject({ rtoNs: '7', attemptTimeoutNs: 2_000_000_000 });
    expect(substrateOptions('live', 'caslock', { variant: 'rw' })).toEqual({ variant: 'rw' });
  });

  it('the live defaults come from the protocols’ own modules, the same table as when the CLI kept it', () => {
    expect(LIVE_PROTOCOL_DEFAULTS).toEqual({
      drtm: { leaseNs: 50_000_000, driftNs: 1_000_000, txMarginNs: 20_000_000 },
      dslr: { leaseNs: 200_000_000, waitUnitNs: 100_000 },
      'dslr-backoff': { leaseNs: 200_000_000, waitUnitNs: 100_000 },
      mcs: { releaseLinkTimeoutNs: 200_000_000 },
      alock: { releaseLinkTimeoutNs: 200_000_000 },
      'rma-rw': { releaseLinkTimeoutNs: 200_000_000, pollIntervalNs: 50_000 },
      shiftlock: { leaseNs: 100_000_000 },
      fisslock: { rtoNs: 250_000_000, attemptTimeoutNs: 2_000_000_000, starvePeriodNs: 20_000_000 },
    });
  });

  it.each(['fisslock', 'srvlock', 'netlock', 'parlock'])('%s on embedded: every acquire is granted and the history passes the checker', async (protocol) => {
    const result = await runInMemory({ substrate: 'embedded', protocol, protocolOptions: substrateOptions('embedded', protocol), spec, computeNodes: 3 });
    expect(result.verdict.violations).toEqual([]);
    expect(result.cutOff).toBe(false);
    expect(result.summary.acquires).toBe(spec.operations);
    expect(result.summary.failures).toBe(0);
  }, 120_000);
});
