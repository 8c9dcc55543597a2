// Protobuf varints of whole numbers below 2^53, written straight into a buffer: the fast encoders
// (verb completions, history chunks) size a message first, then fill one allocation.

/** Bytes of `value` (a non-negative safe integer) as a varint. */
export function varintSize(value: number): number {
  let size = 1;
  while (value >= 128) {
    value = Math.floor(value / 128);
    size++;
  }
  return size;
}

/** Writes `value` (a non-negative safe integer) as a varint at `at`; returns the next offset. */
export function writeVarint(out: Uint8Array, at: number, value: number): number {
  while (value >= 128) {
    out[at++] = (value % 128) | 128;
    value = Math.floor(value / 128);
  }
  out[at++] = value;
  return at;
}
