import type { LockId, RemoteAddr, Verbs } from '@lockfabric/ports';

/** Where verbs issued for an operation are counted (an `AcquireSpan` is one). */
export interface VerbMeter {
  verbs: number;
}

const NO_METER: VerbMeter = { verbs: 0 };

/** The three verbs DSLR issues on one lock word, each counted once on the meter. */
export class LockWordAccess {
  constructor(
    private readonly verbs: Verbs,
    readonly addr: RemoteAddr,
    readonly lock: LockId,
    private readonly meter: VerbMeter = NO_METER,
  ) {}

  /** A new access to the same word that counts on another meter. */
  metered(meter: VerbMeter): LockWordAccess {
    return new LockWordAccess(this.verbs, this.addr, this.lock, meter);
  }

  async read(): Promise<bigint> {
    this.meter.verbs++;
    const bytes = await this.verbs.read(this.addr, 8, { lock: this.lock });
    return new DataView(bytes.buffer, bytes.byteOffset, 8).getBigUint64(0, true);
  }

  faa(add: bigint): Promise<bigint> {
    this.meter.verbs++;
    return this.verbs.faa(this.addr, add, { lock: this.lock });
  }

  cas(compare: bigint, swap: bigint): Promise<bigint> {
    this.meter.verbs++;
    return this.verbs.cas(this.addr, compare, swap, { lock: this.lock });
  }
}
