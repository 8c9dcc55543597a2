import { RegisterAccessError, SwitchProgramError } from './errors.js';

/** Element widths a stateful ALU offers here. Each divides 32, so no element straddles a word. */
export type RegisterWidth = 1 | 8 | 16 | 32;

export const REGISTER_WIDTHS: readonly RegisterWidth[] = [1, 8, 16, 32];

export interface RegisterArrayOptions {
  readonly name: string;
  readonly width: RegisterWidth;
  readonly length: number;
  /** Stage (MAU index) that owns the array; the per-packet stage-order rule reads it. */
  readonly stage?: number;
  /** Value every element holds after construction and after `reset()` (FissLock: `free` starts at 1). */
  readonly initial?: number;
}

/**
 * A switch register array: `length` elements of one fixed width, bit-packed into a Uint32Array so
 * memory is exactly what the hardware would spend (a million 1-bit elements take 125 000 bytes).
 * Values are unsigned integers in [0, 2^width). Out-of-range indexes and values throw
 * {@link RegisterAccessError} rather than wrap, because a silent wrap hides program bugs.
 */
export class RegisterArray {
  readonly name: string;
  readonly width: RegisterWidth;
  readonly length: number;
  readonly stage: number;
  readonly initial: number;
  /** Largest storable value. */
  readonly maxValue: number;
  private readonly words: Uint32Array;
  private readonly perWordShift: number;
  private readonly slotMask: number;

  constructor(options: RegisterArrayOptions) {
    const { name, width, length } = options;
    if (!REGISTER_WIDTHS.includes(width)) {
      throw new SwitchProgramError('bad-array', `register array '${name}': width ${String(width)} is not one of 1, 8, 16, 32 bits`);
    }
    if (!Number.isSafeInteger(length) || length <= 0) {
      throw new SwitchProgramError('bad-array', `register array '${name}': length must be a positive integer, got ${length}`);
    }
    this.name = name;
    this.width = width;
    this.length = length;
    this.stage = options.stage ?? 0;
    this.maxValue = width === 32 ? 0xffff_ffff : (1 << width) - 1;
    // elements per word = 32 / width, a power of two: index → (word, slot) by shift and mask
    this.perWordShift = Math.log2(32 / width);
    this.slotMask = (1 << this.perWordShift) - 1;
    this.words = new Uint32Array(Math.ceil((length * width) / 32));
    this.initial = options.initial ?? 0;
    this.checkValue(this.initial);
    this.reset();
  }

  /** Bits of switch memory the array occupies: `width * length`. */
  get sizeBits(): number {
    return this.width * this.length;
  }

  /** Bytes of host memory behind the array (whole 32-bit words). */
  get storageBytes(): number {
    return this.words.byteLength;
  }

  get(index: number): number {
    this.checkIndex(index);
    return this.load(index);
  }

  set(index: number, value: number): void {
    this.checkIndex(index);
    this.checkValue(value);
    this.store(index, value);
  }

  /** Values of `count` elements from `start`, for control-plane bulk reads. */
  readRange(start: number, count: number): Uint32Array {
    this.checkRange(start, count);
    const out = new Uint32Array(count);
    for (let i = 0; i < count; i++) out[i] = this.load(start + i);
    return out;
  }

  /** Writes `count` values, taken from `values[from…]`, at `start`; every value is checked before any is written. */
  writeRange(start: number, values: ArrayLike<number>, from = 0, count = values.length - from): void {
    this.checkRange(start, count);
    if (from < 0 || from + count > values.length) {
      throw new RegisterAccessError(this.name, `source range [${from}, ${from + count}) is outside the ${values.length} values given`);
    }
    for (let i = 0; i < count; i++) this.checkValue(values[from + i] as number);
    for (let i = 0; i < count; i++) this.store(start + i, values[from + i] as number);
  }

  /** Sets elements [start, end) to `value`. */
  fill(value: number, start = 0, end = this.length): void {
    this.checkRange(start, end - start);
    this.checkValue(value);
    if (start === 0 && end === this.length) {
      // whole array: replicate the value into every slot of a word and fill words at once
      let word = 0;
      for (let slot = 0; slot <= this.slotMask; slot++) word = (word | (value << (slot * this.width))) >>> 0;
      this.words.fill(word);
      return;
    }
    for (let i = start; i < end; i++) this.store(i, value);
  }

  /** Back to the initial value everywhere (a switch reboot). */
  reset(): void {
    this.fill(this.initial);
  }

  private load(index: number): number {
    const word = this.words[index >>> this.perWordShift] as number;
    const shift = (index & this.slotMask) * this.width;
    return ((word >>> shift) & this.maxValue) >>> 0;
  }

  private store(index: number, value: number): void {
    const at = index >>> this.perWordShift;
    const shift = (index & this.slotMask) * this.width;
    const mask = (this.maxValue << shift) >>> 0;
    const word = this.words[at] as number;
    this.words[at] = ((word & ~mask) | ((value << shift) & mask)) >>> 0;
  }

  private checkIndex(index: number): void {
    if (!Number.isInteger(index) || index < 0 || index >= this.length) {
      throw new RegisterAccessError(this.name, `index ${index} is outside [0, ${this.length})`);
    }
  }

  private checkRange(start: number, count: number): void {
    if (!Number.isInteger(start) || !Number.isInteger(count) || start < 0 || count < 0 || start + count > this.length) {
      throw new RegisterAccessError(this.name, `range [${start}, ${start + count}) is outside [0, ${this.length})`);
    }
  }

  /** Throws unless `value` fits the element width. */
  checkValue(value: number): void {
    if (!Number.isInteger(value) || value < 0 || value > this.maxValue) {
      throw new RegisterAccessError(this.name, `value ${value} does not fit ${this.width} bits (0…${this.maxValue})`);
    }
  }
}
