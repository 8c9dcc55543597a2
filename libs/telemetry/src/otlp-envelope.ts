import { OtlpDecodeError, readResource, readScopeName } from './otlp-decode-values.js';
import type { OtlpAttributes } from './otlp-decode-values.js';
import { ProtobufDecodeError, ProtobufReader, WIRE_LENGTH_DELIMITED } from './protobuf-reader.js';

/** Where an exported item (span, metric) stood: its resource and instrumentation scope. */
export interface OtlpItemOrigin {
  readonly resource: OtlpAttributes;
  /** `service.name` of the resource. */
  readonly serviceName: string | undefined;
  readonly scope: string | undefined;
}

/**
 * Walks the envelope every OTLP export request shares — request { 1 resource_X }, resource_X
 * { 1 resource, 2 scope_X }, scope_X { 1 scope, 2 item } — and reads each item with `readItem`.
 * Traces and metrics differ only in the item. Throws {@link OtlpDecodeError} naming `what`.
 */
export function readOtlpExport<T>(body: Uint8Array, what: string, readItem: (item: ProtobufReader, origin: OtlpItemOrigin) => T): T[] {
  try {
    const items: T[] = [];
    const reader = new ProtobufReader(body);
    while (!reader.done) {
      const field = reader.field();
      if (field.number === 1) {
        reader.expect(field, WIRE_LENGTH_DELIMITED);
        items.push(...readResourceItems(reader.message(), readItem));
      } else reader.skip(field.wireType);
    }
    return items;
  } catch (error) {
    if (error instanceof ProtobufDecodeError) throw new OtlpDecodeError(`bad OTLP ${what} protobuf: ${error.message}`, { cause: error });
    throw error;
  }
}

function readResourceItems<T>(reader: ProtobufReader, readItem: (item: ProtobufReader, origin: OtlpItemOrigin) => T): T[] {
  let resource: OtlpAttributes = {};
  const scopes: ProtobufReader[] = [];
  while (!reader.done) {
    const field = reader.field();
    if (field.number === 1) {
      reader.expect(field, WIRE_LENGTH_DELIMITED);
      resource = readResource(reader.message());
    } else if (field.number === 2) {
      reader.expect(field, WIRE_LENGTH_DELIMITED);
      // The resource may follow its scopes on the wire, so read them once it is known.
      scopes.push(reader.message());
    } else reader.skip(field.wireType);
  }
  const name = resource['service.name'];
  const serviceName = typeof name === 'string' ? name : undefined;
  return scopes.flatMap((scoped) => readScopeItems(scoped, { resource, serviceName }, readItem));
}

function readScopeItems<T>(
  reader: ProtobufReader,
  where: Omit<OtlpItemOrigin, 'scope'>,
  readItem: (item: ProtobufReader, origin: OtlpItemOrigin) => T,
): T[] {
  let scope: string | undefined;
  const items: ProtobufReader[] = [];
  while (!reader.done) {
    const field = reader.field();
    if (field.number === 1) {
      reader.expect(field, WIRE_LENGTH_DELIMITED);
      scope = readScopeName(reader.message());
    } else if (field.number === 2) {
      reader.expect(field, WIRE_LENGTH_DELIMITED);
      items.push(reader.message());
    } else reader.skip(field.wireType);
  }
  return items.map((item) => readItem(item, { ...where, scope }));
}
