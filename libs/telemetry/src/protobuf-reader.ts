import { LockFabricError } from '@lockfabric/ports';

/** A protobuf wire-format error: truncated input, an oversized varint, or an unsupported wire type. */
export class ProtobufDecodeError extends LockFabricError {
  readonly code = 'PROTOBUF_DECODE';
  constructor(message: string) {
    super(message);
    this.name = 'ProtobufDecodeError';
  }
}

export const WIRE_VARINT = 0;
export const WIRE_FIXED64 = 1;
export const WIRE_LENGTH_DELIMITED = 2;
export const WIRE_FIXED32 = 5;

export interface Field {
  readonly number: number;
  readonly wireType: number;
}

/**
 * A minimal reader for the protobuf wire format: enough to walk OTLP messages field by field and
 * skip what it does not need. Every read is bounds-checked and throws {@link ProtobufDecodeError}.
 */
export class ProtobufReader {
  private pos = 0;
  private readonly view: DataView;

  constructor(private readonly bytes: Uint8Array) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  get done(): boolean {
    return this.pos >= this.bytes.length;
  }

  field(): Field {
    const tag = this.varint();
    const number = Number(tag >> 3n);
    const wireType = Number(tag & 7n);
    if (number === 0) throw new ProtobufDecodeError(`field number 0 at byte ${this.pos}`);
    return { number, wireType };
  }

  /** An unsigned varint of up to 64 bits. */
  varint(): bigint {
    let result = 0n;
    for (let shift = 0n; shift < 70n; shift += 7n) {
      const byte = this.byte();
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) {
        if (result >= 1n << 64n) throw new ProtobufDecodeError('varint exceeds 64 bits');
        return result;
      }
    }
    throw new ProtobufDecodeError('varint longer than 10 bytes');
  }

  /** A varint known to be small (length, enum, count). */
  uint32(): number {
    const value = this.varint();
    if (value > 0xffffffffn) throw new ProtobufDecodeError(`value ${value} does not fit 32 bits`);
    return Number(value);
  }

  int64(): bigint {
    return BigInt.asIntN(64, this.varint());
  }

  fixed64(): bigint {
    this.need(8);
    const value = this.view.getBigUint64(this.pos, true);
    this.pos += 8;
    return value;
  }

  double(): number {
    this.need(8);
    const value = this.view.getFloat64(this.pos, true);
    this.pos += 8;
    return value;
  }

  fixed32(): number {
    this.need(4);
    const value = this.view.getUint32(this.pos, true);
    this.pos += 4;
    return value;
  }

  bytesField(): Uint8Array {
    const length = this.uint32();
    this.need(length);
    const slice = this.bytes.subarray(this.pos, this.pos + length);
    this.pos += length;
    return slice;
  }

  string(): string {
    return new TextDecoder('utf-8', { fatal: false }).decode(this.bytesField());
  }

  /** A reader over an embedded message. */
  message(): ProtobufReader {
    return new ProtobufReader(this.bytesField());
  }

  skip(wireType: number): void {
    switch (wireType) {
      case WIRE_VARINT:
        this.varint();
        return;
      case WIRE_FIXED64:
        this.need(8);
        this.pos += 8;
        return;
      case WIRE_LENGTH_DELIMITED:
        this.bytesField();
        return;
      case WIRE_FIXED32:
        this.need(4);
        this.pos += 4;
        return;
      default:
        throw new ProtobufDecodeError(`unsupported wire type ${wireType}`);
    }
  }

  /** Asserts the wire type a field must have, so a mismatched field never misreads the rest. */
  expect(field: Field, wireType: number): void {
    if (field.wireType !== wireType) {
      throw new ProtobufDecodeError(`field ${field.number} has wire type ${field.wireType}, expected ${wireType}`);
    }
  }

  private byte(): number {
    this.need(1);
    return this.bytes[this.pos++] as number;
  }

  private need(count: number): void {
    if (this.pos + count > this.bytes.length) {
      throw new ProtobufDecodeError(`truncated: needed ${count} bytes at ${this.pos}, have ${this.bytes.length - this.pos}`);
    }
  }
}
