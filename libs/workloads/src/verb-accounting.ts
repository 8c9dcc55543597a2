import type { Grant, LockClient, Verbs, VerbOpcode } from '@lockfabric/ports';
import { PhaseTiming } from './phase-timing.js';

/** `cs`: the data verbs a holder issues in its critical section (bench --cs-verbs). */
export type VerbPhase = 'acquire' | 'release' | 'cs';
const PHASES = ['acquire', 'release', 'cs'] as const;

/** Verbs issued per phase of a lock operation, by opcode: the papers' "verbs per acquire / release". */
export class VerbAccounting {
  readonly counts: Record<VerbPhase, Record<string, number>> = { acquire: {}, release: {}, cs: {} };
  constructor(
    /** Time in each phase the protocols mark (ShiftLock Table 3), for the same clients. */
    readonly phases = new PhaseTiming(),
  ) {}

  /** A Verbs that counts into the phase `phase()` reports (verbs outside any phase are not counted). */
  wrapVerbs(inner: Verbs, phase: () => VerbPhase | undefined): Verbs {
    const count = (op: VerbOpcode, n = 1) => {
      const current = phase();
      if (current) this.counts[current][op] = (this.counts[current][op] ?? 0) + n;
    };
    return {
      post: (batch, options) => {
        for (const wr of batch) count(wr.op);
        return inner.post(batch, options);
      },
      // Parameters spelled out, not (...args): a rest array and a spread call per verb add up on `sim`.
      read: (addr, length, options) => (count('read'), inner.read(addr, length, options)),
      write: (addr, data, options) => (count('write'), inner.write(addr, data, options)),
      cas: (addr, compare, swap, options) => (count('cas'), inner.cas(addr, compare, swap, options)),
      faa: (addr, add, options) => (count('faa'), inner.faa(addr, add, options)),
      maskedCas: (addr, width, compare, swap, compareMask, swapMask, options) => (count('masked-cas'), inner.maskedCas(addr, width, compare, swap, compareMask, swapMask, options)),
      maskedFaa: (addr, width, add, boundaryMask, options) => (count('masked-faa'), inner.maskedFaa(addr, width, add, boundaryMask, options)),
      isLocal: (addr) => inner.isLocal(addr),
      cpu: inner.cpu,
    };
  }

  /** A client whose acquire and release calls mark the phase the wrapped verbs count into. */
  wrapClient<G extends Grant>(inner: LockClient<G>, setPhase: (phase: VerbPhase | undefined) => void): LockClient<G> {
    // Chained on the call's own promise rather than awaited in an async function: one promise per
    // operation instead of two, and no async frame to resume (wrapper-promises.test.ts counts them).
    const within = <T>(phase: VerbPhase, call: () => Promise<T>): Promise<T> => {
      setPhase(phase);
      let result: Promise<T>;
      try {
        result = call();
      } catch (error) {
        setPhase(undefined);
        return Promise.reject(error);
      }
      return result.then(
        (value) => {
          setPhase(undefined);
          return value;
        },
        (error: unknown) => {
          setPhase(undefined);
          throw error;
        },
      );
    };
    return {
      acquire: (lock, mode, options) => within('acquire', () => inner.acquire(lock, mode, options)),
      release: (grant) => within('release', () => inner.release(grant)),
    };
  }

  merge(other: { readonly acquire: Readonly<Record<string, number>>; readonly release: Readonly<Record<string, number>>; readonly cs?: Readonly<Record<string, number>> }): void {
    for (const phase of PHASES) {
      for (const [op, n] of Object.entries(other[phase] ?? {})) this.counts[phase][op] = (this.counts[phase][op] ?? 0) + n;
    }
  }

  /** Flat `phase.opcode` keys, for wire maps. */
  flat(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const phase of PHASES) for (const [op, n] of Object.entries(this.counts[phase])) out[`${phase}.${op}`] = n;
    return out;
  }

  static fromFlat(flat: Readonly<Record<string, number>>): VerbAccounting {
    const accounting = new VerbAccounting();
    for (const [key, n] of Object.entries(flat)) {
      const [phase, op] = key.split('.', 2);
      if ((phase === 'acquire' || phase === 'release' || phase === 'cs') && op) accounting.counts[phase][op] = (accounting.counts[phase][op] ?? 0) + n;
    }
    return accounting;
  }
}

export interface VerbsPerOp {
  readonly read: number;
  readonly write: number;
  readonly cas: number;
  readonly faa: number;
  readonly maskedCas: number;
  readonly maskedFaa: number;
  readonly total: number;
}

/** Average verbs of a phase per completed operation of that phase. */
export function verbsPerOp(counts: Readonly<Record<string, number>>, operations: number): VerbsPerOp {
  const per = (op: string) => (operations > 0 ? (counts[op] ?? 0) / operations : 0);
  const total = Object.values(counts).reduce((a, b) => a + b, 0);
  return {
    read: per('read'),
    write: per('write'),
    cas: per('cas'),
    faa: per('faa'),
    maskedCas: per('masked-cas'),
    maskedFaa: per('masked-faa'),
    total: operations > 0 ? total / operations : 0,
  };
}
