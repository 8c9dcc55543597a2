import fc from 'fast-check';
import { LockFabricError, errorMessage } from '@lockfabric/ports';

/**
 * Property-based checks for decoders of untrusted input. The property: any input yields a value
 * or a typed {@link LockFabricError}; never a plain exception, and never an output much larger
 * than the input (a decoder that trusts a length field allocates what the field says, not what
 * arrived). A hang shows up as the test's timeout.
 *
 * Runs default to a few hundred so CI stays short; `FUZZ_RUNS` and `FUZZ_SEED` (set by
 * `npm run fuzz`) turn the same properties into a long run.
 */
export interface DecoderTarget<I, T = unknown> {
  readonly name: string;
  decode(input: I): T;
  readonly inputs: fc.Arbitrary<I>;
  /** Size of the input in bytes or characters; the output bound is proportional to it. */
  readonly inputSize: (input: I) => number;
  /** Size of a decoded value; {@link footprint} unless the output has a fixed-size baseline. */
  outputSize?(value: T): number;
  /** Typed errors this decoder may raise besides LockFabricError (e.g. config issue lists). */
  readonly typed?: (error: unknown) => boolean;
}

export interface FuzzOptions {
  readonly runs?: number;
  readonly seed?: number;
}

/** Output variable-size content may not exceed this many units per input unit (plus a constant). */
export const OUTPUT_PER_INPUT = 4;
export const OUTPUT_SLACK = 256;

export class FuzzFailure extends LockFabricError {
  readonly code = 'FUZZ_FAILURE';
  constructor(
    readonly target: string,
    readonly seed: number,
    readonly path: string | undefined,
    readonly counterexample: unknown,
    detail: string,
  ) {
    super(`${target}: property failed (seed ${seed}${path ? `, path ${path}` : ''}): ${detail}; input ${render(counterexample)}`);
    this.name = 'FuzzFailure';
  }
}

/** One input broke the decoder's contract; fast-check shrinks on it and {@link FuzzFailure} reports it. */
class DecoderViolation extends LockFabricError {
  readonly code = 'FUZZ_VIOLATION';
}

function render(value: unknown): string {
  const text = value instanceof Uint8Array ? `bytes ${Buffer.from(value).toString('hex')}` : JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v instanceof Uint8Array ? Buffer.from(v).toString('hex') : v));
  return text.length > 400 ? `${text.slice(0, 400)}…` : text;
}

export function fuzzRuns(fallback: number): number {
  const raw = process.env['FUZZ_RUNS'];
  const runs = raw === undefined ? fallback : Number(raw);
  return Number.isSafeInteger(runs) && runs > 0 ? runs : fallback;
}

function fuzzSeed(): number | undefined {
  const raw = process.env['FUZZ_SEED'];
  if (raw === undefined) return undefined;
  const seed = Number(raw);
  return Number.isSafeInteger(seed) ? seed : undefined;
}

/**
 * Sums the variable-size content of a decoded value: array and map lengths, byte and string
 * lengths. Fixed fields cost nothing, so a message full of defaults from one input byte is fine.
 */
export function footprint(value: unknown, seen = new Set<object>()): number {
  if (typeof value === 'string') return value.length;
  if (value === null || typeof value !== 'object') return 0;
  if (seen.has(value)) return 0;
  seen.add(value);
  if (ArrayBuffer.isView(value)) return value.byteLength;
  if (Array.isArray(value)) return value.length + value.reduce<number>((sum, v) => sum + footprint(v, seen), 0);
  if (value instanceof Map) return value.size + [...value.entries()].reduce<number>((s, [k, v]) => s + footprint(k, seen) + footprint(v, seen), 0);
  if (value instanceof Set) return value.size + [...value].reduce<number>((s, v) => s + footprint(v, seen), 0);
  return Object.values(value as Record<string, unknown>).reduce<number>((sum, v) => sum + footprint(v, seen), 0);
}

/** Returns why `input` breaks the property, or undefined when the decoder behaved. */
export function violation<I, T>(target: DecoderTarget<I, T>, input: I): string | undefined {
  let output: T;
  try {
    output = target.decode(input);
  } catch (error) {
    if (error instanceof LockFabricError || target.typed?.(error)) return undefined;
    const what = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    return `untyped exception ${what}`;
  }
  const size = target.outputSize ? target.outputSize(output) : footprint(output);
  const bound = OUTPUT_PER_INPUT * target.inputSize(input) + OUTPUT_SLACK;
  return size > bound ? `output footprint ${size} exceeds ${bound} for an input of ${target.inputSize(input)}` : undefined;
}

export interface FuzzResult {
  readonly target: string;
  readonly runs: number;
  readonly seed: number;
}

/** Checks the property; throws {@link FuzzFailure} with the shrunk counterexample and its replay seed/path. */
export function fuzzDecoder<I, T>(target: DecoderTarget<I, T>, options: FuzzOptions = {}): FuzzResult {
  const runs = options.runs ?? fuzzRuns(300);
  const seed = options.seed ?? fuzzSeed() ?? Date.now() % 2 ** 31;
  const details = fc.check(
    fc.property(target.inputs, (input) => {
      const why = violation(target, input);
      if (why !== undefined) throw new DecoderViolation(why);
    }),
    { numRuns: runs, seed },
  );
  if (details.failed) {
    const cause = errorMessage(details.errorInstance);
    throw new FuzzFailure(target.name, details.seed, details.counterexamplePath ?? undefined, details.counterexample?.[0], cause);
  }
  if (process.env['FUZZ_REPORT'] === '1') process.stdout.write(`fuzz ${target.name}: ${details.numRuns} runs, seed ${seed}, ok\n`);
  return { target: target.name, runs: details.numRuns, seed };
}

/** A varint field tag followed by a length near 2^32: what a hostile length prefix looks like. */
const HUGE_LENGTH = Uint8Array.of(0x0a, 0xfe, 0xff, 0xff, 0xff, 0x0f);

function splice(base: Uint8Array, at: number, insert: Uint8Array, removeCount = 0): Uint8Array {
  const cut = Math.min(at, base.length);
  const out = new Uint8Array(base.length - Math.min(removeCount, base.length - cut) + insert.length);
  out.set(base.subarray(0, cut));
  out.set(insert, cut);
  out.set(base.subarray(cut + removeCount), cut + insert.length);
  return out;
}

/** Mutations of a valid encoding: truncation, bit flips, huge length prefixes, inserted noise. */
export function mutated(valid: fc.Arbitrary<Uint8Array>): fc.Arbitrary<Uint8Array> {
  const truncated = fc.tuple(valid, fc.nat()).map(([b, n]) => b.subarray(0, b.length === 0 ? 0 : n % b.length));
  const flipped = fc.tuple(valid, fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 7 })), { minLength: 1, maxLength: 4 })).map(([b, flips]) => {
    const out = Uint8Array.from(b);
    if (out.length > 0) for (const [i, bit] of flips) out[i % out.length] = (out[i % out.length] ?? 0) ^ (1 << bit);
    return out;
  });
  const hugeLength = fc.tuple(valid, fc.nat()).map(([b, n]) => splice(b, b.length === 0 ? 0 : n % (b.length + 1), HUGE_LENGTH));
  const lengthByte = fc.tuple(valid, fc.nat(), fc.integer({ min: 0, max: 255 })).map(([b, n, v]) => {
    const out = Uint8Array.from(b);
    if (out.length > 0) out[n % out.length] = v;
    return out;
  });
  const noise = fc.tuple(valid, fc.nat(), fc.uint8Array({ maxLength: 16 })).map(([b, n, extra]) => splice(b, b.length === 0 ? 0 : n % (b.length + 1), extra));
  return fc.oneof(valid, truncated, flipped, hugeLength, lengthByte, noise);
}

/** Untrusted byte input: random bytes, or mutations of `valid` when valid encodings are known. */
export function untrustedBytes(valid?: fc.Arbitrary<Uint8Array>): fc.Arbitrary<Uint8Array> {
  const random = fc.uint8Array({ maxLength: 512 });
  return valid === undefined ? random : fc.oneof({ arbitrary: random, weight: 1 }, { arbitrary: mutated(valid), weight: 3 });
}

/** A byte decoder as a fuzz target. */
export function bytesTarget<T>(name: string, decode: (bytes: Uint8Array) => T, valid?: fc.Arbitrary<Uint8Array>): DecoderTarget<Uint8Array, T> {
  return { name, decode, inputs: untrustedBytes(valid), inputSize: (b) => b.length };
}

export { fc };
