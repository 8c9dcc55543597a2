import { create, toBinary, type DescField, type DescMessage, type MessageShape } from '@bufbuild/protobuf';
import { ScalarType } from '@bufbuild/protobuf';
import fc from 'fast-check';

/**
 * Valid protobuf messages of any schema, built from its descriptor, so every control, driver and
 * recovery message gets well-formed seeds for the mutation fuzzer without a hand-written generator.
 * Nesting stops at `depth`; lists hold at most three entries.
 */
export function protoMessage<Desc extends DescMessage>(schema: Desc, depth = 3): fc.Arbitrary<MessageShape<Desc>> {
  return fc.record(initShape(schema, depth)).map((init) => create(schema, init as never));
}

/** The encodings of {@link protoMessage}. */
export function protoBytes(schema: DescMessage, depth = 3): fc.Arbitrary<Uint8Array> {
  return protoMessage(schema, depth).map((m) => toBinary(schema, m));
}

function initShape(schema: DescMessage, depth: number): Record<string, fc.Arbitrary<unknown>> {
  const shape: Record<string, fc.Arbitrary<unknown>> = {};
  for (const field of schema.fields) {
    if (field.oneof !== undefined) continue;
    const value = fieldValue(field, depth);
    if (value !== undefined) shape[field.localName] = value;
  }
  for (const oneof of schema.oneofs) {
    const cases = oneof.fields
      .map((f) => {
        const value = singular(f, depth);
        return value === undefined ? undefined : value.map((v) => ({ case: f.localName, value: v }));
      })
      .filter((a): a is fc.Arbitrary<{ case: string; value: unknown }> => a !== undefined);
    shape[oneof.localName] = fc.oneof(fc.constant({ case: undefined }), ...cases);
  }
  return shape;
}

function fieldValue(field: DescField, depth: number): fc.Arbitrary<unknown> | undefined {
  switch (field.fieldKind) {
    case 'list': {
      const element =
        field.listKind === 'scalar' ? scalar(field.scalar) : field.listKind === 'enum' ? enumValue(field.enum.values.map((v) => v.number)) : nested(field.message, depth);
      return element === undefined ? fc.constant([]) : fc.array(element, { maxLength: 3 });
    }
    case 'map': {
      const value = field.mapKind === 'scalar' ? scalar(field.scalar) : field.mapKind === 'enum' ? enumValue(field.enum.values.map((v) => v.number)) : nested(field.message, depth);
      if (value === undefined) return fc.constant({});
      return fc.array(fc.tuple(scalar(field.mapKey).map(String), value), { maxLength: 3 }).map((entries) => Object.fromEntries(entries));
    }
    default:
      return singular(field, depth);
  }
}

function singular(field: DescField, depth: number): fc.Arbitrary<unknown> | undefined {
  if (field.fieldKind === 'scalar') return scalar(field.scalar);
  if (field.fieldKind === 'enum') return enumValue(field.enum.values.map((v) => v.number));
  if (field.fieldKind === 'message') return nested(field.message, depth);
  return undefined;
}

function nested(schema: DescMessage, depth: number): fc.Arbitrary<unknown> | undefined {
  return depth <= 0 ? undefined : protoMessage(schema, depth - 1);
}

function enumValue(numbers: number[]): fc.Arbitrary<number> {
  // Mostly known values; sometimes one this build does not know.
  return fc.oneof({ arbitrary: fc.constantFrom(...numbers), weight: 4 }, { arbitrary: fc.integer({ min: -2, max: 1000 }), weight: 1 });
}

const U64 = (1n << 64n) - 1n;
const I64 = 1n << 63n;

function scalar(type: ScalarType): fc.Arbitrary<unknown> {
  switch (type) {
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      return fc.double({ noNaN: false });
    case ScalarType.INT64:
    case ScalarType.SFIXED64:
    case ScalarType.SINT64:
      return fc.bigInt(-I64, I64 - 1n);
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
      return fc.oneof(fc.bigInt(0n, 1000n), fc.bigInt(0n, U64));
    case ScalarType.INT32:
    case ScalarType.SFIXED32:
    case ScalarType.SINT32:
      return fc.integer();
    case ScalarType.UINT32:
    case ScalarType.FIXED32:
      return fc.oneof(fc.nat(1000), fc.nat().map((n) => n >>> 0), fc.constant(0xffffffff));
    case ScalarType.BOOL:
      return fc.boolean();
    case ScalarType.STRING:
      return fc.string({ maxLength: 24 });
    case ScalarType.BYTES:
      return fc.uint8Array({ maxLength: 24 });
  }
}
