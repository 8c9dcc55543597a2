import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOtlpReceiver } from '@lockfabric/testkit';
import type { OtlpReceiver, ReceivedSpan } from '@lockfabric/testkit';
import { runLive } from '@lockfabric/workload-driver';
import { withLiveCluster } from './live-cluster.js';

const instance = (span: ReceivedSpan) => String(span.resource['service.instance.id'] ?? '');

describe('live: a lock handover is one trace across both compute-node processes', () => {
  let receiver: OtlpReceiver;
  let cluster: Awaited<ReturnType<typeof withLiveCluster>>;
  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    cluster = await withLiveCluster({ withSwitch: false, withCoordinator: false, env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_BSP_SCHEDULE_DELAY: '100', LOCKFABRIC_TRACE_RATIO: '1' } });
  });
  afterAll(async () => {
    await cluster?.stop();
    await receiver?.close();
  });

  it.each(['shiftlock', 'declock'])('%s: lock.handover on the releaser and lock.grant on the next holder share a trace', async (protocol) => {
    await runLive({
      state: cluster.state,
      protocol,
      // Writers only, one lock, long holds: waiters queue and every release is a handover.
      spec: { clients: 4, locks: 1, readRatio: 0, distribution: 'uniform', operations: 40, thinkNs: 0, criticalSectionNs: 2_000_000, seed: 5, timeoutMs: 30_000 },
    });
    const crossProcess = (all: readonly ReceivedSpan[]) =>
      all.filter((s) => s.name === 'lock.handover' && s.attributes['lockfabric.protocol'] === protocol).find((h) => all.some((g) => g.name === 'lock.grant' && g.traceId === h.traceId && g.parentSpanId === h.spanId && instance(g) !== instance(h)));
    const spans = await receiver.waitForSpans((all) => crossProcess(all) !== undefined, 30_000);
    const handover = crossProcess(spans)!;
    const grant = spans.find((g) => g.name === 'lock.grant' && g.parentSpanId === handover.spanId)!;
    expect(new Set([instance(handover), instance(grant)]).size).toBe(2);
    expect(instance(handover)).toMatch(/^compute-/);
    expect(instance(grant)).toMatch(/^compute-/);
    expect(handover.attributes['lockfabric.protocol']).toBe(protocol);
    // The next holder's acquire span links to the handover.
    const acquire = spans.find((s) => s.name === 'lock.acquire' && s.links.some((l) => l.spanId === handover.spanId));
    expect(acquire).toBeDefined();
  });
});
