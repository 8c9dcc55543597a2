import { summarizeVerdict } from '@lockfabric/check';
import { protocolById } from '@lockfabric/lock-catalog';
import { VerbAccounting } from '@lockfabric/workloads';
import type { WorkloadSpec } from '@lockfabric/workloads';
import { describe, expect, it } from 'vitest';
import { runInMemory } from './in-memory-run.js';

// DecLock Fig. 16 (left): how often locks are reset and how long a reset takes. Protocols mark the
// start and end of the resets they carry out; the harness counts and times them.
const OPERATIONS = 200;
const alone: WorkloadSpec = { clients: 1, locks: 1, readRatio: 0, distribution: 'uniform', operations: OPERATIONS, thinkNs: 0, criticalSectionNs: 0, seed: 1 };

describe('lock resets (DecLock Fig. 16) on sim', () => {
  it('dslr: one counter reset per COUNT_MAX tickets (DSLR §5.3), each timed from the freezing FAA to the zeroing CAS', async () => {
    const accounting = new VerbAccounting();
    await runInMemory({ substrate: 'sim', protocol: protocolById('dslr'), protocolOptions: { counterLimit: 32 }, spec: alone, accounting });
    const { resets } = accounting.phases;
    expect(resets.count).toBe(Math.floor(OPERATIONS / 32));
    expect(resets.finishedElsewhere).toBe(0);
    // Uncontended the reset is the resetter's release: its fenced CAS, a READ of the drained word, the CAS to zero.
    expect(resets.maxNs).toBeGreaterThan(0);
    expect(accounting.counts.release['cas']).toBe(OPERATIONS + resets.count);
    expect(accounting.counts.release['read']).toBe(resets.count);
  }, 60_000);

  it('declock-cql: overflowing the queue (allowQueueOverflow, 3 contenders for C = 2) resets the lock, and every run still passes', async () => {
    const accounting = new VerbAccounting();
    const spec: WorkloadSpec = { ...alone, clients: 3, operations: 600, criticalSectionNs: 1_000 };
    const result = await runInMemory({ substrate: 'sim', protocol: protocolById('declock-cql'), protocolOptions: { capacity: 2, allowQueueOverflow: true }, spec, accounting });
    expect(result.verdict.ok, summarizeVerdict(result.verdict)).toBe(true);
    expect(accounting.phases.resets.count).toBeGreaterThan(0);
    expect(accounting.phases.resets.totalNs).toBeGreaterThan(0);
  }, 60_000);

  it('without overflow nothing resets: the count comes from the protocol, not from the workload', async () => {
    const accounting = new VerbAccounting();
    await runInMemory({ substrate: 'sim', protocol: protocolById('declock-cql'), spec: { ...alone, clients: 3, operations: 600, criticalSectionNs: 1_000 }, accounting });
    expect(accounting.phases.resets.count).toBe(0);
  }, 60_000);
});
