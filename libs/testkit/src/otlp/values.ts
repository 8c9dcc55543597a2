import { LockFabricError, errorMessage } from '@lockfabric/ports';
import type { AnyValue, KeyValue } from './gen/opentelemetry/proto/common/v1/common_pb.js';
import type { Resource } from './gen/opentelemetry/proto/resource/v1/resource_pb.js';

/** An OTLP attribute value as received. int64 values that do not fit a double exactly stay bigint. */
export type OtlpValue =
  | string
  | number
  | bigint
  | boolean
  | Uint8Array
  | null
  | readonly OtlpValue[]
  | { readonly [key: string]: OtlpValue };

export type OtlpAttributes = Readonly<Record<string, OtlpValue>>;

/** Malformed OTLP content, binary or JSON. */
export class OtlpDecodeError extends LockFabricError {
  readonly code = 'OTLP_DECODE';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'OtlpDecodeError';
  }
}

/** Where an exported item (span, metric) stood: its resource and instrumentation scope. */
export interface OtlpItemOrigin {
  readonly resource: OtlpAttributes;
  /** `service.name` of the resource. */
  readonly serviceName: string | undefined;
  readonly scope: string | undefined;
}

/** The origin of the items under one resource and one scope (the scope's name only). */
export function originOf(resource: Resource | undefined, scopeName: string | undefined): OtlpItemOrigin {
  const attributes = attributesOf(resource?.attributes ?? []);
  const name = attributes['service.name'];
  // protobuf-es gives an absent scope name as ''; the receiver has always said "no scope".
  return { resource: attributes, serviceName: typeof name === 'string' ? name : undefined, scope: scopeName || undefined };
}

export function attributesOf(list: readonly KeyValue[]): OtlpAttributes {
  const attributes: Record<string, OtlpValue> = {};
  for (const kv of list) attributes[kv.key] = kv.value ? valueOf(kv.value) : null;
  return attributes;
}

function valueOf(value: AnyValue): OtlpValue {
  const v = value.value;
  switch (v.case) {
    case 'stringValue':
    case 'boolValue':
    case 'doubleValue':
      return v.value;
    case 'intValue':
      return narrowInt(v.value);
    case 'bytesValue':
      return v.value.slice();
    case 'arrayValue':
      return v.value.values.map(valueOf);
    case 'kvlistValue':
      return attributesOf(v.value.values);
    default:
      return null;
  }
}

/** An int64 as a number when exact, else bigint. */
export function narrowInt(value: bigint): number | bigint {
  const n = Number(value);
  return Number.isSafeInteger(n) ? n : value;
}

export function toHex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

/** Runs a protobuf-es decode, turning its errors into {@link OtlpDecodeError} naming `what`. */
export function decoding<T>(what: string, decode: () => T): T {
  try {
    return decode();
  } catch (error) {
    if (error instanceof OtlpDecodeError) throw error;
    throw new OtlpDecodeError(`bad OTLP ${what}: ${errorMessage(error)}`, { cause: error });
  }
}
