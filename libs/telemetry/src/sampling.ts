import { ParentBasedSampler, SamplingDecision, TraceIdRatioBasedSampler } from '@opentelemetry/sdk-trace-base';
import type { Sampler, SamplingResult } from '@opentelemetry/sdk-trace-base';
import type { Attributes, Context, Link, SpanKind } from '@opentelemetry/api';

/**
 * Head sampling that never drops a span outright: the ratio decides the sampled flag (and so what
 * downstream processes decide), but every span is recorded so the tail rule in
 * {@link TailKeepProcessor} can still export a slow or failed one. This is the "record all, export
 * if sampled OR slow OR error" design: it costs one recorded span per operation, which is far
 * cheaper than buffering whole traces for true tail sampling.
 */
export class RecordAllSampler implements Sampler {
  constructor(private readonly head: Sampler) {}

  shouldSample(context: Context, traceId: string, spanName: string, spanKind: SpanKind, attributes: Attributes, links: Link[]): SamplingResult {
    const result = this.head.shouldSample(context, traceId, spanName, spanKind, attributes, links);
    if (result.decision !== SamplingDecision.NOT_RECORD) return result;
    return { ...result, decision: SamplingDecision.RECORD };
  }

  toString(): string {
    return `RecordAllSampler{${this.head.toString()}}`;
  }
}

/** Parent-based head sampling with `ratio` for root spans, wrapped so every span records. */
export function lockFabricSampler(ratio: number): Sampler {
  return new RecordAllSampler(new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) }));
}
