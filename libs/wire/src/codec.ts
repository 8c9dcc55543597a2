// Conversions between port types and protobuf messages, and decoding that turns garbage into
// MalformedInputError. One module per message family; this file is the codec's public face.
export { decodeWire, encodeWire } from './decode.js';
export { EnumMapping, lockModes, messageKinds, opcodes, packetTypes, verbStatuses } from './enums.js';
export { decodeMessage, encodeMessage, messageFromWire, messageToWire } from './message-codec.js';
export { batchEpochOf, decodePacketBatch, encodePacketBatch, stampBatchEpoch, lockPacketFromWire, lockPacketToWire, type DecodedPacketBatch } from './packet-codec.js';
export {
  TRACEPARENT_HEADER,
  formatTraceparent,
  isValidSpanContext,
  parseTraceparent,
  traceContextFromWire,
  traceContextToWire,
} from './traceparent.js';
export { isU128, joinU128, splitU128, U128_MAX, U64_MASK } from './u128.js';
export {
  completionBatchToWire,
  completionFromWire,
  completionToWire,
  decodeCompletionBatch,
  decodeWorkRequestBatch,
  encodeCompletionBatch,
  encodeWorkRequestBatch,
  workRequestBatchToWire,
  workRequestFromWire,
  workRequestToWire,
  workRequestTrace,
} from './verbs-codec.js';
export { decodeDoorbell, encodeCompletions, type Doorbell } from './doorbell.js';
