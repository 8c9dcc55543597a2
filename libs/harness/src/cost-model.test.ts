import { IDEAL_COST_MODEL, PAPER_COST_MODEL, withOverrides } from '@lockfabric/fabric';
import { protocolById } from '@lockfabric/lock-catalog';
import type { WorkloadSpec } from '@lockfabric/workloads';
import { describe, expect, it } from 'vitest';
import { runInMemory } from './in-memory-run.js';
import { modelProtocolOptions } from './cost-model-wiring.js';

// CAS spinning on a few hot locks: retries alone could drive the memory node's NIC far past any ceiling.
const SPEC: WorkloadSpec = { clients: 64, locks: 1_000, readRatio: 0.5, distribution: { zipf: 0.99 }, operations: 1_500, thinkNs: 0, criticalSectionNs: 0, seed: 5 };
const MN_IOPS = 2_000_000;

async function caslock(costModel: typeof PAPER_COST_MODEL) {
  const result = await runInMemory({ substrate: 'sim', protocol: protocolById('caslock'), spec: SPEC, computeNodes: 2, costModel });
  const load = result.nicLoads?.['0'];
  if (!load) throw new Error('memory node 0 served no verbs');
  // Verbs the memory node's NIC issued, against the span they were issued over.
  const spanNs = load.lastIssueNs - load.firstArrivalNs;
  const byOpcode = result.nicCounters['0']!.byOpcode as Record<string, number>;
  return { result, load, spanNs, perSec: (load.admitted - 1) / (spanNs / 1e9), casPerSec: (byOpcode['cas']! - 1) / (spanNs / 1e9) };
}

describe('the memory node NIC ceiling on sim (DecLock §2.2)', () => {
  it('with the ceiling on, caslock never gets more verbs per second through the memory node than the ceiling allows', async () => {
    const model = withOverrides(PAPER_COST_MODEL, { mnIops: MN_IOPS });
    const { result, load, spanNs, perSec, casPerSec } = await caslock(model);
    expect(result.verdict.ok).toBe(true);
    // CAS to acquire (and retry), a WRITE to release: each class under its ceiling, and together
    // under the NIC's one budget (an atomic weighs two WRITEs under paper)
    expect(casPerSec).toBeLessThanOrEqual(model.nic.atomicIops!);
    expect(perSec).toBeLessThanOrEqual(MN_IOPS);
    expect(load.busyNs).toBeLessThanOrEqual(spanNs + 1e9 / model.nic.atomicIops!);
    // and it binds: most verbs waited for it
    expect(load.throttled).toBeGreaterThan(load.admitted / 2);
    expect(result.nicCounters['0']!.verbs).toBe(load.admitted);
  });

  it('with the ceiling off (ideal), the same run goes past it: the old behaviour', async () => {
    const { result, load, perSec, casPerSec } = await caslock(IDEAL_COST_MODEL);
    expect(result.verdict.ok).toBe(true);
    expect(perSec).toBeGreaterThan(MN_IOPS);
    expect(casPerSec).toBeGreaterThan(MN_IOPS / 2);
    expect(load.throttled).toBe(0);
  });
});

describe('protocol timers sized to the model', () => {
  it('drops pacing on FIFO links and sizes the RTO to the lock-manager queue; given options win', () => {
    const fisslock = protocolById('fisslock');
    expect(modelProtocolOptions(PAPER_COST_MODEL, fisslock)).toEqual({ pacingNs: '0', rtoNs: '1000000' });
    expect(modelProtocolOptions(PAPER_COST_MODEL, fisslock, { rtoNs: '5' })).toMatchObject({ rtoNs: '5' });
    expect(modelProtocolOptions(IDEAL_COST_MODEL, fisslock)).toEqual({});
    expect(modelProtocolOptions(PAPER_COST_MODEL, protocolById('caslock'))).toEqual({});
  });
});

describe('a critical section of data verbs (bench --cs-verbs) under the NIC ceiling', () => {
  // Each hold READs (shared) or WRITEs (exclusive) its object once on the memory node.
  const spec = (clients: number): WorkloadSpec => ({ ...SPEC, clients, operations: 1_200, csVerbs: 1, csVerbBytes: 64 });

  async function run(clients: number, costModel: typeof PAPER_COST_MODEL) {
    const result = await runInMemory({ substrate: 'sim', protocol: protocolById('caslock'), spec: spec(clients), computeNodes: 2, costModel });
    const load = result.nicLoads!['0']!;
    const acquires = result.summary.acquires;
    const cs = result.accounting.counts.cs;
    const acquireCas = result.accounting.counts.acquire['cas'] ?? 0;
    return { result, load, acquires, dataVerbs: (cs['read'] ?? 0) + (cs['write'] ?? 0), retriesPerAcquire: acquireCas / acquires - 1 };
  }

  it('counts the data verbs per operation, READ for shared and WRITE for exclusive', async () => {
    const { result, acquires, dataVerbs } = await run(8, IDEAL_COST_MODEL);
    expect(result.verdict.ok).toBe(true);
    expect(dataVerbs).toBe(acquires);
    const cs = result.accounting.counts.cs;
    expect(cs['read']).toBeGreaterThan(0);
    expect(cs['write']).toBeGreaterThan(0);
    expect(Object.keys(cs).sort()).toEqual(['read', 'write']);
  });

  it("with the ceiling on, spinning clients' CAS retries make the data verbs wait at the memory node", async () => {
    const few = await run(4, PAPER_COST_MODEL);
    const many = await run(64, PAPER_COST_MODEL);
    const off = await run(64, IDEAL_COST_MODEL);
    for (const r of [few, many, off]) expect(r.result.verdict.ok).toBe(true);
    // more spinners, many more retries per acquire …
    expect(many.retriesPerAcquire).toBeGreaterThan(few.retriesPerAcquire + 2);
    // … and each READ/WRITE (data verbs, releases) queues far longer behind them for the ceiling
    const waitNs = (r: typeof few) => r.load.throttledReadWriteNs / r.load.readWrites;
    expect(waitNs(many)).toBeGreaterThan(10 * waitNs(few));
    // without the ceiling nothing queues for it, whatever the retries
    expect(off.load.throttledReadWrites).toBe(0);
    // and data verbs done per simulated ms fall below the uncapped run's
    const perMs = (r: typeof few) => r.dataVerbs / (r.result.summary.elapsedNs / 1e6);
    expect(perMs(many)).toBeLessThan(perMs(off));
  });
});
