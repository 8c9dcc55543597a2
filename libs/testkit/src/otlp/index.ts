// An OTLP/HTTP receiver for tests and the decoding it needs, over the collector's own protos
// (generated with protobuf-es into ./gen). Test support only: no production library ships it.
export { startOtlpReceiver } from './receiver.js';
export type { OtlpReceiver, OtlpReceiverOptions, OtlpScriptedAnswer } from './receiver.js';
export { decodeTraceRequestProtobuf, decodeTraceRequestJson } from './traces.js';
export type { ReceivedSpan, ReceivedLink } from './traces.js';
export { decodeMetricsRequestProtobuf, OTLP_TEMPORALITY_CUMULATIVE, OTLP_TEMPORALITY_DELTA } from './metrics.js';
export type { ReceivedMetric, ReceivedNumberPoint, ReceivedHistogramPoint } from './metrics.js';
export { compareMetricsExport } from './compare.js';
export type { MetricSnapshot } from './compare.js';
export { OtlpDecodeError } from './values.js';
export type { OtlpValue, OtlpAttributes, OtlpItemOrigin } from './values.js';
