import type { Grant, LockClient, Verbs, VerbOpcode } from '@lockfabric/ports';
import { PhaseTiming } from './phase-timing.js';
import type { OperationTimingHooks, TimedOperation } from './phase-timing.js';

/** `cs`: the data verbs a holder issues in its critical section (bench --cs-verbs). */
export type VerbPhase = 'acquire' | 'release' | 'cs';
const PHASES = ['acquire', 'release', 'cs'] as const;

const OPCODES: readonly VerbOpcode[] = ['read', 'write', 'cas', 'faa', 'masked-cas', 'masked-faa'];
const OPCODE_INDEX: Readonly<Record<string, number>> = Object.fromEntries(OPCODES.map((op, i) => [op, i]));
const PHASE_INDEX: Readonly<Record<VerbPhase, number>> = { acquire: 0, release: 1, cs: 2 };
const [READ, WRITE, CAS, FAA, MASKED_CAS, MASKED_FAA] = [0, 1, 2, 3, 4, 5];

/**
 * Verbs issued per phase of a lock operation, by opcode: the papers' "verbs per acquire / release".
 * Counted into one typed array (phase × opcode) rather than string-keyed records: the count runs on
 * every verb of a bench run, and the records are built only when a report reads them.
 */
export class VerbAccounting {
  readonly #tally = new Float64Array(PHASES.length * OPCODES.length);
  /** Cells counted at least once, even by 0 (a merged wire map): they keep their key in `counts`. */
  readonly #seen = new Uint8Array(PHASES.length * OPCODES.length);
  /** Opcodes outside `VerbOpcode` that a merged map carried, kept as they came. */
  readonly #other: Record<VerbPhase, Record<string, number>> = { acquire: {}, release: {}, cs: {} };

  constructor(
    /** Time in each phase the protocols mark (ShiftLock Table 3), for the same clients. */
    readonly phases = new PhaseTiming(),
  ) {}

  /** Verbs by phase and opcode, as records (built on each read). */
  get counts(): Record<VerbPhase, Record<string, number>> {
    const out: Record<VerbPhase, Record<string, number>> = { acquire: {}, release: {}, cs: {} };
    for (const phase of PHASES) {
      const base = PHASE_INDEX[phase] * OPCODES.length;
      const record = out[phase];
      for (let i = 0; i < OPCODES.length; i++) if (this.#seen[base + i]) record[OPCODES[i] as VerbOpcode] = this.#tally[base + i] as number;
      Object.assign(record, this.#other[phase]);
    }
    return out;
  }

  /** A Verbs that counts into the phase `phase()` reports (verbs outside any phase are not counted). */
  wrapVerbs(inner: Verbs, phase: () => VerbPhase | undefined): Verbs {
    const tally = this.#tally;
    const seen = this.#seen;
    const count = (op: number): void => {
      const current = phase();
      if (current === undefined) return;
      const cell = PHASE_INDEX[current] * OPCODES.length + op;
      tally[cell] = (tally[cell] as number) + 1;
      seen[cell] = 1;
    };
    return {
      post: (batch, options) => {
        for (const wr of batch) count(OPCODE_INDEX[wr.op] as number);
        return inner.post(batch, options);
      },
      // Parameters spelled out, not (...args): a rest array and a spread call per verb add up on `sim`.
      read: (addr, length, options) => (count(READ), inner.read(addr, length, options)),
      write: (addr, data, options) => (count(WRITE), inner.write(addr, data, options)),
      cas: (addr, compare, swap, options) => (count(CAS), inner.cas(addr, compare, swap, options)),
      faa: (addr, add, options) => (count(FAA), inner.faa(addr, add, options)),
      maskedCas: (addr, width, compare, swap, compareMask, swapMask, options) => (count(MASKED_CAS), inner.maskedCas(addr, width, compare, swap, compareMask, swapMask, options)),
      maskedFaa: (addr, width, add, boundaryMask, options) => (count(MASKED_FAA), inner.maskedFaa(addr, width, add, boundaryMask, options)),
      isLocal: (addr) => inner.isLocal(addr),
      cpu: inner.cpu,
    };
  }

  /** Adds `n` verbs of `op` to `phase`. */
  add(phase: VerbPhase, op: string, n: number): void {
    const index = OPCODE_INDEX[op];
    if (index === undefined) {
      this.#other[phase][op] = (this.#other[phase][op] ?? 0) + n;
      return;
    }
    const cell = PHASE_INDEX[phase] * OPCODES.length + index;
    this.#tally[cell] = (this.#tally[cell] as number) + n;
    this.#seen[cell] = 1;
  }

  /**
   * A client whose acquire and release calls mark the phase the wrapped verbs count into. With
   * `timing` (the client's `PhaseTiming.forClient(...).hooks`) the same reaction also closes the
   * operation's phase timing: one promise per operation for both jobs, where wrapping the client
   * in `PhaseTiming`'s own wrapper as well made two (wrapper-promises.test.ts).
   */
  wrapClient<G extends Grant>(inner: LockClient<G>, setPhase: (phase: VerbPhase | undefined) => void, timing?: OperationTimingHooks): LockClient<G> {
    if (timing) return this.#wrapTimed(inner, setPhase, timing);
    // Chained on the call's own promise rather than awaited in an async function: one promise per
    // operation instead of two, and no async frame to resume (wrapper-promises.test.ts counts them).
    // The inner call is made here, not through a closure: no function allocated or called per operation.
    const done = (value: unknown): unknown => {
      setPhase(undefined);
      return value;
    };
    const failed = (error: unknown): never => {
      setPhase(undefined);
      throw error;
    };
    return {
      acquire: (lock, mode, options) => {
        setPhase('acquire');
        let result: Promise<G>;
        try {
          result = inner.acquire(lock, mode, options);
        } catch (error) {
          setPhase(undefined);
          return Promise.reject(error);
        }
        return result.then(done as (value: G) => G, failed);
      },
      release: (grant) => {
        setPhase('release');
        let result: Promise<void>;
        try {
          result = inner.release(grant);
        } catch (error) {
          setPhase(undefined);
          return Promise.reject(error);
        }
        return result.then(done as () => void, failed);
      },
    };
  }

  #wrapTimed<G extends Grant>(inner: LockClient<G>, setPhase: (phase: VerbPhase | undefined) => void, timing: OperationTimingHooks): LockClient<G> {
    // Timing closes first, then the phase, in the one reaction: the order PhaseTiming's wrapper
    // inside this one gave. Each reaction keeps its own operation's number, so a call that
    // settles after a later one began (its caller gave up on it) cannot close the later one.
    const settle = <T>(result: Promise<T>, id: number, kind: TimedOperation): Promise<T> =>
      result.then(
        (value) => {
          timing.completed(id, kind);
          setPhase(undefined);
          return value;
        },
        (error: unknown) => {
          timing.failed(id);
          setPhase(undefined);
          throw error;
        },
      );
    const thrown = (id: number, error: unknown): Promise<never> => {
      timing.failed(id);
      setPhase(undefined);
      return Promise.reject(error);
    };
    return {
      acquire: (lock, mode, options) => {
        setPhase('acquire');
        const id = timing.begin();
        let result: Promise<G>;
        try {
          result = inner.acquire(lock, mode, options);
        } catch (error) {
          return thrown(id, error);
        }
        return settle(result, id, mode === 'shared' ? 'acquire-shared' : 'acquire-exclusive');
      },
      release: (grant) => {
        setPhase('release');
        const id = timing.begin();
        let result: Promise<void>;
        try {
          result = inner.release(grant);
        } catch (error) {
          return thrown(id, error);
        }
        return settle(result, id, 'release');
      },
    };
  }

  merge(other: { readonly acquire: Readonly<Record<string, number>>; readonly release: Readonly<Record<string, number>>; readonly cs?: Readonly<Record<string, number>> }): void {
    for (const phase of PHASES) for (const [op, n] of Object.entries(other[phase] ?? {})) this.add(phase, op, n);
  }

  /** Flat `phase.opcode` keys, for wire maps. */
  flat(): Record<string, number> {
    const out: Record<string, number> = {};
    const counts = this.counts;
    for (const phase of PHASES) for (const [op, n] of Object.entries(counts[phase])) out[`${phase}.${op}`] = n;
    return out;
  }

  static fromFlat(flat: Readonly<Record<string, number>>): VerbAccounting {
    const accounting = new VerbAccounting();
    for (const [key, n] of Object.entries(flat)) {
      const [phase, op] = key.split('.', 2);
      if ((phase === 'acquire' || phase === 'release' || phase === 'cs') && op) accounting.add(phase, op, n);
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
