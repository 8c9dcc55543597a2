import { WIRE_FIXED64, WIRE_LENGTH_DELIMITED, WIRE_VARINT } from './protobuf-reader.js';
import type { ProtobufReader } from './protobuf-reader.js';
import { LockFabricError } from '@lockfabric/ports';

// OTLP pieces every export request shares: attribute values, resources, scope names.

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

export function readResource(reader: ProtobufReader): OtlpAttributes {
  const attributes: Record<string, OtlpValue> = {};
  while (!reader.done) {
    const field = reader.field();
    if (field.number === 1) {
      reader.expect(field, WIRE_LENGTH_DELIMITED);
      readKeyValueInto(reader.message(), attributes);
    } else reader.skip(field.wireType);
  }
  return attributes;
}

export function readScopeName(reader: ProtobufReader): string | undefined {
  let name: string | undefined;
  while (!reader.done) {
    const field = reader.field();
    if (field.number === 1) {
      reader.expect(field, WIRE_LENGTH_DELIMITED);
      name = reader.string();
    } else reader.skip(field.wireType);
  }
  return name;
}

export function readKeyValueInto(reader: ProtobufReader, into: Record<string, OtlpValue>): void {
  let key = '';
  let value: OtlpValue = null;
  while (!reader.done) {
    const field = reader.field();
    if (field.number === 1) {
      reader.expect(field, WIRE_LENGTH_DELIMITED);
      key = reader.string();
    } else if (field.number === 2) {
      reader.expect(field, WIRE_LENGTH_DELIMITED);
      value = readAnyValue(reader.message());
    } else reader.skip(field.wireType);
  }
  into[key] = value;
}

function readAnyValue(reader: ProtobufReader): OtlpValue {
  let value: OtlpValue = null;
  while (!reader.done) {
    const field = reader.field();
    switch (field.number) {
      case 1:
        reader.expect(field, WIRE_LENGTH_DELIMITED);
        value = reader.string();
        break;
      case 2:
        reader.expect(field, WIRE_VARINT);
        value = reader.varint() !== 0n;
        break;
      case 3:
        reader.expect(field, WIRE_VARINT);
        value = narrowInt(reader.int64());
        break;
      case 4:
        reader.expect(field, WIRE_FIXED64);
        value = reader.double();
        break;
      case 5: {
        reader.expect(field, WIRE_LENGTH_DELIMITED);
        const array = reader.message();
        const values: OtlpValue[] = [];
        while (!array.done) {
          const item = array.field();
          if (item.number === 1) {
            array.expect(item, WIRE_LENGTH_DELIMITED);
            values.push(readAnyValue(array.message()));
          } else array.skip(item.wireType);
        }
        value = values;
        break;
      }
      case 6: {
        reader.expect(field, WIRE_LENGTH_DELIMITED);
        const list = reader.message();
        const entries: Record<string, OtlpValue> = {};
        while (!list.done) {
          const item = list.field();
          if (item.number === 1) {
            list.expect(item, WIRE_LENGTH_DELIMITED);
            readKeyValueInto(list.message(), entries);
          } else list.skip(item.wireType);
        }
        value = entries;
        break;
      }
      case 7:
        reader.expect(field, WIRE_LENGTH_DELIMITED);
        value = reader.bytesField().slice();
        break;
      default:
        reader.skip(field.wireType);
    }
  }
  return value;
}

/** An int64 as a number when exact, else bigint. */
export function narrowInt(value: bigint): number | bigint {
  const n = Number(value);
  return Number.isSafeInteger(n) ? n : value;
}

export function toHex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}
