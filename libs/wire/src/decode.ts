import { fromBinary, toBinary, type DescMessage, type MessageShape } from '@bufbuild/protobuf';
import { MalformedInputError } from './ports.js';
import { errorMessage } from '@lockfabric/ports';

/**
 * Parses bytes from the network. Anything the protobuf reader rejects (truncated frames, bad wire
 * types, invalid UTF-8) becomes a {@link MalformedInputError} naming `source`, so every receiver
 * handles garbage the same way: count, log at a bounded rate, drop.
 */
export function decodeWire<Desc extends DescMessage>(schema: Desc, bytes: Uint8Array, source: string): MessageShape<Desc> {
  try {
    return fromBinary(schema, bytes);
  } catch (error) {
    throw new MalformedInputError(source, `not a ${schema.typeName}: ${errorMessage(error)}`);
  }
}

export function encodeWire<Desc extends DescMessage>(schema: Desc, message: MessageShape<Desc>): Uint8Array {
  return toBinary(schema, message);
}
