import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOtlpReceiver } from '@lockfabric/testkit';
import type { OtlpReceiver } from '@lockfabric/testkit';
import { runLive } from '@lockfabric/workload-driver';
import { withLiveCluster } from './live-cluster.js';

describe('live: one acquire is one trace across processes', () => {
  let receiver: OtlpReceiver;
  let cluster: Awaited<ReturnType<typeof withLiveCluster>>;
  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    cluster = await withLiveCluster({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_BSP_SCHEDULE_DELAY: '100', LOCKFABRIC_TRACE_RATIO: '1' } });
  });
  afterAll(async () => {
    await cluster?.stop();
    await receiver?.close();
  });

  it('the compute node\'s lock.acquire and the memory node\'s verb spans share a trace id', async () => {
    await runLive({
      state: cluster.state,
      protocol: 'caslock',
      spec: { clients: 1, locks: 16, readRatio: 0, distribution: 'uniform', operations: 5, thinkNs: 0, criticalSectionNs: 0, seed: 1 },
    });
    const spans = await receiver.waitForSpans((all) => {
      const acquires = all.filter((s) => s.name === 'lock.acquire');
      return acquires.some((a) => all.some((s) => s.traceId === a.traceId && s.serviceName === 'lockfabric-memory'));
    }, 30_000);
    const acquire = spans.find((s) => s.name === 'lock.acquire' && spans.some((v) => v.traceId === s.traceId && v.serviceName === 'lockfabric-memory'))!;
    const trace = spans.filter((s) => s.traceId === acquire.traceId);
    const services = new Set(trace.map((s) => s.serviceName));
    expect(services).toEqual(new Set(['lockfabric-compute', 'lockfabric-memory']));
    const verb = trace.find((s) => s.name === 'verb.cas')!;
    expect(verb.parentSpanId).toBe(acquire.spanId);
    expect(acquire.attributes['lockfabric.protocol']).toBe('caslock');
  });
});
