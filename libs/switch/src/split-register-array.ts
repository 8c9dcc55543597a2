import { RegisterAccessError } from './errors.js';
import type { RegisterArray, RegisterWidth } from './register-array.js';

/**
 * One logical array cut into contiguous index ranges, one part per stage, because a single MAU
 * cannot hold it (FissLock §6.3: `mid` and `inca` for a million locks span several MAUs). A
 * packet touches only the part that covers its index — the MAU-selection step is `locate`.
 */
export class SplitRegisterArray {
  readonly name: string;
  readonly width: RegisterWidth;
  readonly length: number;
  /** Elements per part; the last part may be shorter. */
  readonly partLength: number;

  constructor(
    name: string,
    readonly parts: readonly RegisterArray[],
    partLength: number,
  ) {
    const first = parts[0];
    if (!first) throw new RangeError(`split array '${name}' has no parts`);
    this.name = name;
    this.width = first.width;
    this.partLength = partLength;
    this.length = parts.reduce((sum, part) => sum + part.length, 0);
  }

  get sizeBits(): number {
    return this.width * this.length;
  }

  /** The part holding logical `index` and the offset inside it (`index / L`, `index % L`). */
  locate(index: number): { readonly array: RegisterArray; readonly offset: number } {
    if (!Number.isInteger(index) || index < 0 || index >= this.length) {
      throw new RegisterAccessError(this.name, `index ${index} is outside [0, ${this.length})`);
    }
    const part = Math.floor(index / this.partLength);
    return { array: this.parts[part] as RegisterArray, offset: index - part * this.partLength };
  }
}
