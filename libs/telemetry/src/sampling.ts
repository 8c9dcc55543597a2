import { ParentBasedSampler, SamplingDecision, TraceIdRatioBasedSampler } from '@opentelemetry/sdk-trace-base';
import type { Sampler, SamplingResult } from '@opentelemetry/sdk-trace-base';
import { isSpanContextValid, trace } from '@opentelemetry/api';
import type { Attributes, Context, Link, SpanKind } from '@opentelemetry/api';

/** Span names the tail rule may keep when head sampling dropped their trace: lock-level operations. */
const TAIL_CANDIDATE = /^(lock|recovery)\./;

/** Whether the tail rule may keep a span of this name when its parent is not sampled. */
export function isTailCandidate(spanName: string): boolean {
  return TAIL_CANDIDATE.test(spanName);
}

/**
 * Head sampling that still records what the tail rule in {@link TailKeepProcessor} may want: the
 * ratio decides the sampled flag (and so what downstream processes decide), and an unsampled span
 * is recorded anyway when it is a lock-level span (`lock.*`, `recovery.*`, which carry the outcome
 * and grant time the rule reads) or a root span, so a slow or failed acquisition, or a failure
 * outside any lock operation, is still exported. Verbs and switch packets under an unsampled lock
 * operation are not recorded: their cost (one recorded span per verb, on the compute node and on
 * the NIC) made 1% sampling nearly as expensive as 100% (measure with `bench --substrate live --trace-ratio`),
 * and a failed verb shows up as the failed outcome of its operation.
 *
 * createOtelTrace's deferred mode (deferred-span.ts) makes the same choices without calling the SDK
 * for unsampled spans; this sampler still decides for the spans it hands over (sampled ones, and
 * deferred spans the tail rule keeps) and for every span in the eager mutant.
 */
export class RecordAllSampler implements Sampler {
  constructor(private readonly head: Sampler) {}

  shouldSample(context: Context, traceId: string, spanName: string, spanKind: SpanKind, attributes: Attributes, links: Link[]): SamplingResult {
    const result = this.head.shouldSample(context, traceId, spanName, spanKind, attributes, links);
    if (result.decision !== SamplingDecision.NOT_RECORD) return result;
    const parent = trace.getSpanContext(context);
    const isRoot = parent === undefined || !isSpanContextValid(parent);
    if (!isRoot && !isTailCandidate(spanName)) return result;
    return { ...result, decision: SamplingDecision.RECORD };
  }

  toString(): string {
    return `RecordAllSampler{${this.head.toString()}}`;
  }
}

/** Parent-based head sampling with `ratio` for root spans, recording what the tail rule may keep. */
export function lockFabricSampler(ratio: number): Sampler {
  return new RecordAllSampler(new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) }));
}
