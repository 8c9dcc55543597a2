import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOtlpReceiver } from '@lockfabric/testkit';
import type { OtlpReceiver } from '@lockfabric/testkit';
import { runLive } from '@lockfabric/workload-driver';
import { withLiveCluster } from './live-cluster.js';

/**
 * Head ratio 0 and a slowness threshold of 0: no operation is sampled, every acquire is kept by the
 * tail rule. The compute node exports them from its deferred spans (decision 0021) through the real
 * OTLP exporter; nothing under them was sampled, so no verb span reaches the collector.
 */
describe('live: unsampled acquires kept by the tail rule', () => {
  let receiver: OtlpReceiver;
  let cluster: Awaited<ReturnType<typeof withLiveCluster>>;
  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    cluster = await withLiveCluster({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_BSP_SCHEDULE_DELAY: '100', LOCKFABRIC_TRACE_RATIO: '0', LOCKFABRIC_TRACE_SLOW_MS: '0' } });
  });
  afterAll(async () => {
    await cluster?.stop();
    await receiver?.close();
  });

  it('exports each acquire once, tail-kept, as a root of its own trace, and no verb span', async () => {
    await runLive({
      state: cluster.state,
      protocol: 'caslock',
      spec: { clients: 1, locks: 16, readRatio: 0, distribution: 'uniform', operations: 5, thinkNs: 0, criticalSectionNs: 0, seed: 1 },
    });
    const spans = await receiver.waitForSpans((all) => all.filter((s) => s.name === 'lock.acquire').length >= 5, 30_000);
    const acquires = spans.filter((s) => s.name === 'lock.acquire');
    expect(acquires).toHaveLength(5);
    expect(new Set(acquires.map((s) => s.traceId)).size).toBe(5);
    for (const acquire of acquires) {
      expect(acquire.serviceName).toBe('lockfabric-compute');
      expect(acquire.parentSpanId).toBe('');
      expect(acquire.endTimeUnixNano).toBeGreaterThan(acquire.startTimeUnixNano);
      expect(acquire.attributes).toMatchObject({ 'lockfabric.protocol': 'caslock', 'lockfabric.outcome': 'granted', 'lockfabric.sampling.tail_kept': 'slow' });
    }
    expect(spans.filter((s) => s.name.startsWith('verb.') || s.name === 'lock.release')).toEqual([]);
  });
});
