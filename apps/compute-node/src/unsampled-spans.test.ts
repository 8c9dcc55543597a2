import { protocolById } from '@lockfabric/lock-catalog';
import type { LockClient } from '@lockfabric/ports';
import { createSimCluster } from '@lockfabric/sim';
import { ATTR_TAIL_KEPT, SPAN_LOCK_ACQUIRE, createInMemoryTelemetry, exportedFields, seededIdWords } from '@lockfabric/telemetry';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it, vi } from 'vitest';

const EPOCH_MS = 1_764_000_000_000;

/**
 * A caslock client on `sim` traced by the in-memory pipeline at head ratio 0, as a compute node
 * runs it at 1 % for the 99 % of operations not sampled. The SDK's clocks follow the virtual clock
 * and ids come from a seeded source, so the deferred path and the eager mutant can be compared
 * span for span.
 */
async function caslockRun(options: { readonly slowMs: number; readonly mutantEagerUnsampled: boolean; readonly contend: boolean }) {
  let sdkSpansStarted = 0;
  const observer: SpanProcessor = {
    onStart: () => void sdkSpansStarted++,
    onEnd: () => {},
    forceFlush: () => Promise.resolve(),
    shutdown: () => Promise.resolve(),
  };
  const telemetry = createInMemoryTelemetry({ ratio: 0, slowMs: options.slowMs, idWords: seededIdWords(3), observer, mutantEagerUnsampled: options.mutantEagerUnsampled });
  const caslock = protocolById('caslock');
  const { cluster, scheduler } = createSimCluster({ seed: 5, lockCount: 4, entryBytes: caslock.entryBytes, computeNodes: 2, trace: telemetry.trace });
  vi.spyOn(performance, 'now').mockImplementation(() => cluster.clock.nowNs() / 1e6);
  vi.spyOn(Date, 'now').mockImplementation(() => EPOCH_MS + Math.floor(cluster.clock.nowNs() / 1e6));
  const [n1, n2] = cluster.computeNodeIds as [number, number];
  const a = caslock.createClient(cluster.clientPorts({ node: n1, client: 0 })) as LockClient;
  const b = caslock.createClient(cluster.clientPorts({ node: n2, client: 0 })) as LockClient;
  let failure: unknown;
  const run = (async () => {
    const grant = await a.acquire(1, 'exclusive', { timeoutMs: 10 });
    // B tries for 50 µs of virtual time while A holds the lock: a failed acquire.
    if (options.contend) failure = await b.acquire(1, 'exclusive', { timeoutMs: 0.05 }).then(() => undefined, (error: unknown) => error);
    await a.release(grant);
  })();
  await scheduler.run({ maxEvents: 100_000 });
  await run;
  vi.restoreAllMocks();
  const exported = telemetry.spans().map(exportedFields);
  await telemetry.shutdown();
  return { sdkSpansStarted, exported, failure };
}

/** Both paths, one after the other from one call site, so recorded errors' stack traces match too. */
async function deferredAndEager(options: { readonly slowMs: number; readonly contend: boolean }) {
  const runs: Awaited<ReturnType<typeof caslockRun>>[] = [];
  for (const mutantEagerUnsampled of [false, true]) runs.push(await caslockRun({ ...options, mutantEagerUnsampled }));
  const [deferred, eager] = runs as [(typeof runs)[0], (typeof runs)[0]];
  return { deferred, eager };
}

describe('unsampled lock operations on a compute node', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('a fast acquire and release start no SDK span and export nothing', async () => {
    const mutant = process.env['LOCKFABRIC_TEST_MUTANT_EAGER_UNSAMPLED'] === '1';
    const { sdkSpansStarted, exported } = await caslockRun({ slowMs: 10, mutantEagerUnsampled: mutant, contend: false });
    expect(exported).toEqual([]);
    expect(sdkSpansStarted).toBe(0);
  });

  it('the eager mutant starts an SDK span for each of them', async () => {
    const { sdkSpansStarted, exported } = await caslockRun({ slowMs: 10, mutantEagerUnsampled: true, contend: false });
    expect(exported).toEqual([]);
    expect(sdkSpansStarted).toBe(2);
  });

  it('a slow acquire is exported tail-kept, as the eager path exported it', async () => {
    const { deferred, eager } = await deferredAndEager({ slowMs: 0, contend: false });
    expect(deferred.exported.map((span) => [span.name, span.attributes[ATTR_TAIL_KEPT]])).toEqual([[SPAN_LOCK_ACQUIRE, 'slow']]);
    expect(deferred.exported).toEqual(eager.exported);
    expect(deferred.sdkSpansStarted).toBe(1);
    expect(eager.sdkSpansStarted).toBe(2);
  });

  it('a failed acquire is exported with its exception and ERROR status, as the eager path exported it', async () => {
    const { deferred, eager } = await deferredAndEager({ slowMs: 10, contend: true });
    expect(deferred.failure).toBeInstanceOf(Error);
    const [failed] = deferred.exported;
    expect(deferred.exported).toHaveLength(1);
    expect(failed?.attributes[ATTR_TAIL_KEPT]).toBe('error');
    expect(failed?.status.code).toBe(2);
    expect(failed?.events.map((event) => event.name)).toEqual(['exception']);
    expect(deferred.exported).toEqual(eager.exported);
    expect(deferred.sdkSpansStarted).toBe(1);
    expect(eager.sdkSpansStarted).toBe(3);
  });
});
