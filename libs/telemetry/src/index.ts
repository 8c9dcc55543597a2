export * from './semconv.js';
export {
  TRACEPARENT_HEADER,
  formatTraceparent,
  parseTraceparent,
  isValidSpanContextRef,
} from './traceparent.js';
export { createOtelTrace, toRemoteSpanContext, fromSpanContext, isSampled } from './otel-trace.js';
export { RecordAllSampler, lockFabricSampler } from './sampling.js';
export { TailKeepProcessor, tailVerdict } from './tail-keep-processor.js';
export type { TailRule, TailVerdict } from './tail-keep-processor.js';
export { readTelemetryEnv } from './telemetry-env.js';
export type { Env, TelemetryEnv } from './telemetry-env.js';
export {
  initTelemetry,
  createInMemoryTelemetry,
  TRACER_NAME,
  SERVICE_NAMESPACE,
  DEFAULT_TRACE_RATIO,
  DEFAULT_TRACE_SLOW_MS,
} from './setup.js';
export type { Telemetry, TelemetryOptions, InMemoryTelemetry, InMemoryTelemetryOptions } from './setup.js';
export { startOtlpReceiver } from './otlp-receiver.js';
export type { OtlpReceiver, OtlpReceiverOptions } from './otlp-receiver.js';
export { decodeTraceRequestProtobuf, decodeTraceRequestJson, OtlpDecodeError } from './otlp-decode.js';
export type { ReceivedSpan, ReceivedLink, OtlpValue, OtlpAttributes } from './otlp-decode.js';
export { ProtobufDecodeError } from './protobuf-reader.js';
export {
  MetricsRegistry,
  MetricsError,
  PROMETHEUS_CONTENT_TYPE,
  escapeLabelValue,
  escapeHelp,
  formatValue,
} from './metrics.js';
export type { Counter, Gauge, Histogram, Labels, MetricOptions, HistogramOptions } from './metrics.js';
export { parsePrometheusText, sumSamples, PrometheusFormatError } from './prometheus-parse.js';
export type { PrometheusFamily, PrometheusSample, PrometheusType } from './prometheus-parse.js';
