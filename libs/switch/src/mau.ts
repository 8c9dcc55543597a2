import { SwitchProgramError } from './errors.js';
import { RegisterArray } from './register-array.js';
import type { RegisterArrayOptions } from './register-array.js';

/**
 * About 560 KB of stateful memory per ingress MAU on the FissLock testbed ASIC (FissLock §6.1),
 * taken as 560 000 bytes as the spec's emulator config says (`mau_bytes=560_000`, §6.3): the MAU
 * formula then gives the 1.68 M locks the FissLock client assumes. 560 KiB would give 1 720 320,
 * and ids in between would be decided on the switch while the client sends them to ParLock.
 */
export const DEFAULT_MAU_BYTES = 560_000;
export const DEFAULT_MAU_CAPACITY_BITS = DEFAULT_MAU_BYTES * 8;

export interface MauOptions {
  readonly index: number;
  readonly capacityBits?: number;
  /** Called before an array is placed; the pipeline uses it to refuse duplicate names and late allocations. */
  readonly admit?: (name: string) => void;
}

/**
 * One match-action unit (pipeline stage): it owns register arrays within a stateful-memory budget
 * counted in bits. Match-action tables are not charged here: on the hardware they live in separate
 * (and larger) SRAM/TCAM.
 */
export class Mau {
  readonly index: number;
  readonly capacityBits: number;
  private readonly owned: RegisterArray[] = [];
  private used = 0;
  private readonly admit: ((name: string) => void) | undefined;

  constructor(options: MauOptions) {
    const capacityBits = options.capacityBits ?? DEFAULT_MAU_CAPACITY_BITS;
    if (!Number.isSafeInteger(capacityBits) || capacityBits < 0) {
      throw new SwitchProgramError('bad-array', `stage ${options.index}: capacity must be a non-negative integer of bits, got ${capacityBits}`);
    }
    this.index = options.index;
    this.capacityBits = capacityBits;
    this.admit = options.admit;
  }

  get usedBits(): number {
    return this.used;
  }

  get freeBits(): number {
    return this.capacityBits - this.used;
  }

  get arrays(): readonly RegisterArray[] {
    return this.owned;
  }

  /** Throws a `capacity` {@link SwitchProgramError} unless `bits` more fit in this stage. */
  checkFits(name: string, bits: number, detail: string): void {
    if (bits > this.freeBits) {
      throw new SwitchProgramError(
        'capacity',
        `stage ${this.index}: register array '${name}' needs ${bits} bits (${detail}) but only ${this.freeBits} of ` +
          `${this.capacityBits} bits are free (${this.used} used); short by ${bits - this.freeBits} bits`,
      );
    }
  }

  /** Allocates an array in this stage. */
  addArray(options: Omit<RegisterArrayOptions, 'stage'>): RegisterArray {
    this.admit?.(options.name);
    const array = new RegisterArray({ ...options, stage: this.index });
    this.checkFits(array.name, array.sizeBits, `${array.width} bits × ${array.length}`);
    this.owned.push(array);
    this.used += array.sizeBits;
    return array;
  }
}
