/**
 * DSLR lock words: one 64-bit word per lock, counters packed into fixed bit fields.
 *
 * The upper 32 bits hold the "now serving / released" counters (`n*`), the lower 32 bits the
 * "next ticket" counters (`max*`), as the paper writes the word: {nX, nS, maxX, maxS}.
 *
 * standard (spec §4.1, A12): four 16-bit fields
 *   nX 63..48 | nS 47..32 | maxX 31..16 | maxS 15..0           counter limit 2^15 (bit 15 is the canary)
 * update (spec §10.4, A15): six 10-bit fields, the paper's {nU, nX, nS, maxU, maxX, maxS}
 *   nU 61..52 | nX 51..42 | nS 41..32 | maxU 29..20 | maxX 19..10 | maxS 9..0   counter limit 2^9
 *   (each half keeps the standard half's place; bits 30, 31, 62, 63 are spare)
 *
 * A word is decoded into plain numbers for the protocol's arithmetic; FAA addends are built here so
 * a carry or borrow is the NIC's 64-bit arithmetic, exactly as on hardware.
 */

export type CounterField = 'nX' | 'nS' | 'nU' | 'maxX' | 'maxS' | 'maxU';

/** The three bakeries: exclusive, shared and (update layout only) update tickets. */
export type Bakery = 'X' | 'S' | 'U';

/** A decoded lock word. In the standard layout `nU` and `maxU` are always 0. */
export interface Counters {
  readonly nX: number;
  readonly nS: number;
  readonly nU: number;
  readonly maxX: number;
  readonly maxS: number;
  readonly maxU: number;
}

export const ZERO_COUNTERS: Counters = Object.freeze({ nX: 0, nS: 0, nU: 0, maxX: 0, maxS: 0, maxU: 0 });

const U64 = 1n << 64n;

export function nowField(bakery: Bakery): CounterField {
  return bakery === 'X' ? 'nX' : bakery === 'S' ? 'nS' : 'nU';
}

export function maxField(bakery: Bakery): CounterField {
  return bakery === 'X' ? 'maxX' : bakery === 'S' ? 'maxS' : 'maxU';
}

export type LayoutName = 'standard' | 'update';

export class WordLayout {
  /** Bits per counter field. */
  readonly fieldBits: number;
  /** The canary limit (COUNT_MAX): a max counter at or above it freezes the word. */
  readonly counterLimit: number;
  private readonly shifts: Readonly<Record<CounterField, number | undefined>>;
  private readonly mask: bigint;

  private constructor(
    readonly name: LayoutName,
    fieldBits: number,
    shifts: Readonly<Record<CounterField, number | undefined>>,
    counterLimit: number,
  ) {
    this.fieldBits = fieldBits;
    this.shifts = shifts;
    this.mask = (1n << BigInt(fieldBits)) - 1n;
    this.counterLimit = counterLimit;
  }

  /** The paper's counter limit for each layout: half of the field's range. */
  static defaultLimit(name: LayoutName): number {
    return name === 'standard' ? 2 ** 15 : 2 ** 9;
  }

  /** `counterLimit` below the default is a test knob that makes resets frequent. */
  static of(name: LayoutName, counterLimit = WordLayout.defaultLimit(name)): WordLayout {
    if (!Number.isInteger(counterLimit) || counterLimit < 2 || counterLimit > WordLayout.defaultLimit(name)) {
      throw new RangeError(`counter limit of the ${name} layout must be an integer in 2..${WordLayout.defaultLimit(name)}, got ${counterLimit}`);
    }
    return name === 'standard'
      ? new WordLayout(name, 16, { nX: 48, nS: 32, nU: undefined, maxX: 16, maxS: 0, maxU: undefined }, counterLimit)
      : new WordLayout(name, 10, { nX: 42, nS: 32, nU: 52, maxX: 10, maxS: 0, maxU: 20 }, counterLimit);
  }

  get hasUpdate(): boolean {
    return this.shifts.maxU !== undefined;
  }

  /** Largest value a field can hold. */
  get fieldMax(): number {
    return Number(this.mask);
  }

  decode(word: bigint): Counters {
    return {
      nX: this.get(word, 'nX'),
      nS: this.get(word, 'nS'),
      nU: this.get(word, 'nU'),
      maxX: this.get(word, 'maxX'),
      maxS: this.get(word, 'maxS'),
      maxU: this.get(word, 'maxU'),
    };
  }

  encode(c: Counters): bigint {
    let word = 0n;
    for (const field of FIELDS) {
      const value = c[field];
      const shift = this.shifts[field];
      if (shift === undefined) {
        if (value !== 0) throw new RangeError(`the ${this.name} layout has no ${field} field (got ${value})`);
        continue;
      }
      if (!Number.isInteger(value) || value < 0 || value > this.fieldMax) {
        throw new RangeError(`${field} = ${value} does not fit a ${this.fieldBits}-bit field`);
      }
      word |= BigInt(value) << BigInt(shift);
    }
    return word;
  }

  get(word: bigint, field: CounterField): number {
    const shift = this.shifts[field];
    return shift === undefined ? 0 : Number((word >> BigInt(shift)) & this.mask);
  }

  /** FAA addend that adds `k` to `field`. */
  increment(field: CounterField, k: number): bigint {
    return BigInt(k) << BigInt(this.requireShift(field));
  }

  /** FAA addend that subtracts `k` from `field` (two's complement; borrows if the field is below k). */
  decrement(field: CounterField, k: number): bigint {
    return (U64 - this.increment(field, k)) % U64;
  }

  /** Either max counter at or over the limit: no new tickets until the word is zeroed. */
  frozen(c: Counters): boolean {
    return c.maxX >= this.counterLimit || c.maxS >= this.counterLimit || c.maxU >= this.counterLimit;
  }

  private requireShift(field: CounterField): number {
    const shift = this.shifts[field];
    if (shift === undefined) throw new RangeError(`the ${this.name} layout has no ${field} field`);
    return shift;
  }
}

const FIELDS: readonly CounterField[] = ['nX', 'nS', 'nU', 'maxX', 'maxS', 'maxU'];

/** No outstanding ticket: every issued slot was released. */
export function drained(c: Counters): boolean {
  return c.nX === c.maxX && c.nS === c.maxS && c.nU === c.maxU;
}

export function sameNow(a: Counters, b: Counters): boolean {
  return a.nX === b.nX && a.nS === b.nS && a.nU === b.nU;
}

/** Adds `k` to `field`, as plain numbers (no wrap; callers stay inside the field). */
export function withAdded(c: Counters, field: CounterField, k: number): Counters {
  return { ...c, [field]: c[field] + k };
}

/** `w + add` modulo 2^64, as the NIC's FAA computes it. */
export function addWord(word: bigint, add: bigint): bigint {
  return (word + add) % U64;
}

/** Human-readable `{nX,nS,maxX,maxS}` (or the six-field form), for messages and test names. */
export function formatCounters(c: Counters, layout: WordLayout): string {
  return layout.hasUpdate ? `{${c.nU},${c.nX},${c.nS},${c.maxU},${c.maxX},${c.maxS}}` : `{${c.nX},${c.nS},${c.maxX},${c.maxS}}`;
}
