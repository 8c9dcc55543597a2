import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import type { Resource } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { ReadableSpan, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { ATTR_SERVICE_INSTANCE_ID, ATTR_SERVICE_NAME, ATTR_SERVICE_NAMESPACE } from '@opentelemetry/semantic-conventions';
import { ConfigError, noopTrace } from '@lockfabric/ports';
import type { Trace } from '@lockfabric/ports';
import { createOtelTrace } from './otel-trace.js';
import { lockFabricSampler } from './sampling.js';
import { PinnedIdGenerator, ratioUpperBound } from './span-ids.js';
import type { IdWords } from './span-ids.js';
import { TailKeepProcessor } from './tail-keep-processor.js';
import { readTelemetryEnv } from './telemetry-env.js';
import type { Env } from './telemetry-env.js';

export const TRACER_NAME = '@lockfabric/telemetry';
export const SERVICE_NAMESPACE = 'lockfabric';
export const DEFAULT_TRACE_RATIO = 1;
export const DEFAULT_TRACE_SLOW_MS = 10;

export interface TelemetryOptions {
  readonly serviceName: string;
  readonly serviceInstanceId?: string;
  readonly env?: Env;
  /** Head-sampling ratio for root spans; overrides LOCKFABRIC_TRACE_RATIO and OTEL_TRACES_SAMPLER_ARG. */
  readonly ratio?: number;
  /** Unsampled `lock.acquire` spans slower than this are still exported; overrides LOCKFABRIC_TRACE_SLOW_MS. */
  readonly slowMs?: number;
  /**
   * Mutant (tests and comparisons only): every unsampled span the tail rule may keep is a full SDK
   * span from its start, as before deferred spans (docs/decisions/0021-deferred-unsampled-spans.md).
   */
  readonly mutantEagerUnsampled?: boolean;
}

export interface Telemetry {
  readonly trace: Trace;
  readonly enabled: boolean;
  /** Exports everything ended so far. */
  forceFlush(): Promise<void>;
  /** Flushes and stops exporting; later calls are no-ops. */
  shutdown(): Promise<void>;
}

const DISABLED_TELEMETRY: Telemetry = {
  trace: noopTrace,
  enabled: false,
  forceFlush: () => Promise.resolve(),
  shutdown: () => Promise.resolve(),
};

/**
 * Tracing for one service. Off unless the environment asks for it (an OTLP endpoint, or
 * OTEL_TRACES_EXPORTER=otlp); OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none switch it off
 * regardless. When on: BasicTracerProvider → tail-keep processor → BatchSpanProcessor → OTLP/HTTP
 * protobuf exporter, with parent-based ratio head sampling in record-all mode (see sampling.ts).
 * The provider is not registered globally: the returned `trace` is the only way in, as DESIGN §1
 * passes ports explicitly.
 */
export function initTelemetry(options: TelemetryOptions): Telemetry {
  const settings = readTelemetryEnv(options.env ?? process.env);
  if (!settings.enabled) return DISABLED_TELEMETRY;
  const rule = samplingRule(options, settings.ratio, settings.slowMs);
  const exporter = new OTLPTraceExporter({
    url: settings.tracesUrl,
    headers: { ...settings.headers },
    ...(settings.exportTimeoutMs !== undefined ? { timeoutMillis: settings.exportTimeoutMs } : {}),
  });
  const batch = new BatchSpanProcessor(exporter, {
    ...(settings.batch.scheduledDelayMs !== undefined ? { scheduledDelayMillis: settings.batch.scheduledDelayMs } : {}),
    ...(settings.batch.maxQueueSize !== undefined ? { maxQueueSize: settings.batch.maxQueueSize } : {}),
    ...(settings.batch.maxExportBatchSize !== undefined ? { maxExportBatchSize: settings.batch.maxExportBatchSize } : {}),
    ...(settings.batch.exportTimeoutMs !== undefined ? { exportTimeoutMillis: settings.batch.exportTimeoutMs } : {}),
  });
  return buildTelemetry(serviceResource(options.serviceName, options.serviceInstanceId), rule, batch, {
    ...(options.mutantEagerUnsampled ? { mutantEagerUnsampled: true } : {}),
  });
}

export interface InMemoryTelemetryOptions extends PipelineExtras {
  readonly serviceName?: string;
  readonly ratio?: number;
  readonly slowMs?: number;
}

interface PipelineExtras {
  /** See {@link TelemetryOptions.mutantEagerUnsampled}. */
  readonly mutantEagerUnsampled?: boolean;
  /** Where span and trace ids come from (default Math.random); tests pass a seeded source. */
  readonly idWords?: IdWords;
  /** A processor beside the exporting one, told of every SDK span: tests count `onStart` with it. */
  readonly observer?: SpanProcessor;
}

export interface InMemoryTelemetry extends Telemetry {
  readonly exporter: InMemorySpanExporter;
  /** Spans exported so far, in the order they ended. */
  spans(): ReadableSpan[];
  /** Forgets the spans exported so far. */
  reset(): void;
}

/**
 * The same pipeline as {@link initTelemetry} (sampler and tail rule included) exporting
 * synchronously into memory, for tests. Ratio defaults to 1 (export everything).
 */
export function createInMemoryTelemetry(options: InMemoryTelemetryOptions = {}): InMemoryTelemetry {
  const exporter = new InMemorySpanExporter();
  const rule = samplingRule({ ratio: options.ratio ?? DEFAULT_TRACE_RATIO, ...(options.slowMs !== undefined ? { slowMs: options.slowMs } : {}) }, undefined, undefined);
  const telemetry = buildTelemetry(serviceResource(options.serviceName ?? 'lockfabric-test', undefined), rule, new SimpleSpanProcessor(exporter), options);
  return {
    ...telemetry,
    exporter,
    spans: () => exporter.getFinishedSpans(),
    reset: () => exporter.reset(),
  };
}

interface SamplingRule {
  readonly ratio: number;
  readonly slowMs: number;
}

function samplingRule(
  options: { readonly ratio?: number; readonly slowMs?: number },
  envRatio: number | undefined,
  envSlowMs: number | undefined,
): SamplingRule {
  const ratio = options.ratio ?? envRatio ?? DEFAULT_TRACE_RATIO;
  const slowMs = options.slowMs ?? envSlowMs ?? DEFAULT_TRACE_SLOW_MS;
  const issues: string[] = [];
  if (!(ratio >= 0 && ratio <= 1)) issues.push(`trace.ratio: expected a ratio between 0 and 1, got ${ratio}`);
  if (!(slowMs >= 0 && Number.isFinite(slowMs))) issues.push(`trace.slowMs: expected a non-negative number of milliseconds, got ${slowMs}`);
  if (issues.length > 0) throw new ConfigError(issues);
  return { ratio, slowMs };
}

/** The resource every signal of a service is exported under: service name, namespace and instance. */
export function serviceResource(serviceName: string, serviceInstanceId: string | undefined): Resource {
  return defaultResource().merge(
    resourceFromAttributes({
      [ATTR_SERVICE_NAME]: serviceName,
      [ATTR_SERVICE_NAMESPACE]: SERVICE_NAMESPACE,
      ...(serviceInstanceId !== undefined ? { [ATTR_SERVICE_INSTANCE_ID]: serviceInstanceId } : {}),
    }),
  );
}

function buildTelemetry(resource: Resource, rule: SamplingRule, exporting: SpanProcessor, extras: PipelineExtras): Telemetry {
  // Ids come from our generator so that spans drawn before the SDK sees them (deferred spans,
  // sampled roots) keep their ids when handed over; see otel-trace.ts.
  const ids = new PinnedIdGenerator(extras.idWords);
  const provider = new BasicTracerProvider({
    resource,
    idGenerator: ids,
    sampler: lockFabricSampler(rule.ratio),
    spanProcessors: [new TailKeepProcessor(exporting, { slowMs: rule.slowMs }), ...(extras.observer ? [extras.observer] : [])],
  });
  const tracer = provider.getTracer(TRACER_NAME);
  let stopped: Promise<void> | undefined;
  return {
    trace: extras.mutantEagerUnsampled
      ? createOtelTrace(tracer)
      : createOtelTrace(tracer, { tracer, ids, rule: { slowMs: rule.slowMs }, rootUpperBound: ratioUpperBound(rule.ratio) }),
    enabled: true,
    forceFlush: () => (stopped ? Promise.resolve() : provider.forceFlush()),
    shutdown: () => (stopped ??= provider.shutdown()),
  };
}
