import { afterEach, describe, expect, it } from 'vitest';
import { ATTR_GRANT_NS, ATTR_OUTCOME, ATTR_TAIL_KEPT, OUTCOME_VALUE_GRANTED, OUTCOME_VALUE_TIMEOUT, SPAN_LOCK_ACQUIRE, SPAN_LOCK_RELEASE } from './semconv.js';
import { createInMemoryTelemetry } from './setup.js';
import type { InMemoryTelemetry } from './setup.js';

const MS = 1_000_000;

describe('tail rule: export if sampled OR slow OR error', () => {
  let telemetry: InMemoryTelemetry;
  afterEach(async () => {
    await telemetry.shutdown();
  });

  const acquire = (grantNs: number, outcome = OUTCOME_VALUE_GRANTED) => {
    const span = telemetry.trace.startSpan(SPAN_LOCK_ACQUIRE, { attributes: { [ATTR_GRANT_NS]: grantNs, [ATTR_OUTCOME]: outcome } });
    span.end();
    return span.context?.spanId;
  };
  const exported = () => telemetry.spans().map((span) => [span.spanContext().spanId, span.attributes[ATTR_TAIL_KEPT]]);

  it('drops fast successful unsampled acquisitions', () => {
    telemetry = createInMemoryTelemetry({ ratio: 0, slowMs: 5 });
    acquire(5 * MS);
    acquire(1);
    expect(telemetry.spans()).toEqual([]);
  });

  it('keeps a slow unsampled acquisition, marked slow and sampled', () => {
    telemetry = createInMemoryTelemetry({ ratio: 0, slowMs: 5 });
    const slow = acquire(5 * MS + 1);
    expect(exported()).toEqual([[slow, 'slow']]);
    expect(telemetry.spans()[0]?.spanContext().traceFlags).toBe(1);
  });

  it('applies the slowness rule to lock.acquire only', () => {
    telemetry = createInMemoryTelemetry({ ratio: 0, slowMs: 5 });
    telemetry.trace.startSpan(SPAN_LOCK_RELEASE, { attributes: { [ATTR_GRANT_NS]: 100 * MS } }).end();
    expect(telemetry.spans()).toEqual([]);
  });

  it('keeps failures: a failed outcome or an ERROR status', () => {
    telemetry = createInMemoryTelemetry({ ratio: 0, slowMs: 5 });
    const timedOut = acquire(1, OUTCOME_VALUE_TIMEOUT);
    const span = telemetry.trace.startSpan('verb.cas');
    span.recordError(new Error('misaligned'));
    span.end();
    expect(exported()).toEqual([
      [timedOut, 'error'],
      [span.context?.spanId, 'error'],
    ]);
  });

  it('under an unsampled operation, records lock-level children for the tail rule but not verbs', () => {
    telemetry = createInMemoryTelemetry({ ratio: 0, slowMs: 5 });
    const handover = telemetry.trace.startSpan('lock.handover');
    const verb = telemetry.trace.startSpan('verb.faa', { parent: handover.context });
    verb.recordError(new Error('bad-rkey'));
    verb.end();
    const grant = telemetry.trace.startSpan('lock.grant', { parent: handover.context, attributes: { [ATTR_OUTCOME]: OUTCOME_VALUE_TIMEOUT } });
    grant.end();
    const slowChild = telemetry.trace.startSpan(SPAN_LOCK_ACQUIRE, { parent: handover.context, attributes: { [ATTR_GRANT_NS]: 6 * MS, [ATTR_OUTCOME]: OUTCOME_VALUE_GRANTED } });
    slowChild.end();
    handover.end();
    // The verb's failure is not recorded (its operation reports the failed outcome); the lock-level
    // spans are, so the failed grant and the slow acquire are kept.
    expect(exported()).toEqual([
      [grant.context?.spanId, 'error'],
      [slowChild.context?.spanId, 'slow'],
    ]);
    expect(verb.context?.traceId).toBe(handover.context?.traceId);
  });

  it('exports head-sampled spans unchanged', () => {
    telemetry = createInMemoryTelemetry({ ratio: 1, slowMs: 5 });
    const fast = acquire(1);
    const slow = acquire(50 * MS);
    expect(exported()).toEqual([
      [fast, undefined],
      [slow, undefined],
    ]);
  });
});
