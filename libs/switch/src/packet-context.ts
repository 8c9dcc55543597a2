/**
 * The per-packet access discipline of the emulated pipeline (DESIGN §3.2, FissLock spec §6.1),
 * enforced on every packet at run time, so every test that sends a packet checks it:
 *
 * 1. One access per array per packet. A packet may read, write, read-modify-write (`update`),
 *    `set` or `clear` each register array at most once; a second access of any kind to the same
 *    array throws `SwitchProgramError('double-access')`. The hardware has one stateful ALU pass per
 *    array per packet.
 * 2. 1-bit arrays: only `read`, `set` and `clear`. `set`/`clear` write unconditionally and return
 *    the old bit; `update` and `write` on a 1-bit array throw `'one-bit-conditional'`, because a
 *    1-bit ALU cannot make its new value depend on its old one. Which of `set`/`clear` to call may
 *    depend on packet fields and earlier stages, never on the bit itself. `set`/`clear` on a wider
 *    array throw `'not-one-bit'`.
 * 3. Forward only. Accesses follow the stage order: after touching an array in stage j, a packet
 *    may not touch an array in a stage that comes before j (`'stage-order'`); arrays of the same
 *    stage may be touched in any order. The order is the default 0…N-1 unless the program calls
 *    `useStageOrder(name)` before its first access, naming a permutation it declared at build
 *    time with a reason (see {@link StageOrder}).
 * 4. Only arrays of this switch's pipeline (`'foreign-array'`); indexes inside the array and
 *    values that fit the width (`RegisterAccessError`).
 *
 * Writes of a packet are journaled, so a packet whose program throws leaves no register changed.
 */
import type { LockPacket } from '@lockfabric/ports';
import { SwitchProgramError } from './errors.js';
import type { Pipeline, StageOrder } from './pipeline.js';
import type { RegisterArray } from './register-array.js';

/** Result of a read-modify-write: the value to store and what the ALU hands back to the program. */
export interface RegisterUpdate<T> {
  readonly next: number;
  readonly out: T;
}

/** What a program may do to switch state while processing one packet. */
export interface PacketContext {
  readonly packet: LockPacket;
  read(array: RegisterArray, index: number): number;
  /** Unconditional store (not for 1-bit arrays: use `set`/`clear`). */
  write(array: RegisterArray, index: number, value: number): void;
  /** One read-modify-write: `action` gets the old value and returns the new one and an output. */
  update<T>(array: RegisterArray, index: number, action: (old: number) => RegisterUpdate<T>): T;
  /** 1-bit arrays: store 1, return the old bit. */
  set(array: RegisterArray, index: number): 0 | 1;
  /** 1-bit arrays: store 0, return the old bit. */
  clear(array: RegisterArray, index: number): 0 | 1;
  /** Follow a stage order declared at build time; only before the packet's first access. */
  useStageOrder(name: string): void;
  /** Labels the packet's decision for the switch counters (e.g. `grant-free`, `routed`). */
  decide(decision: string): void;
}

type AccessOp = 'read' | 'write' | 'update' | 'set' | 'clear';

interface JournalEntry {
  readonly array: RegisterArray;
  readonly index: number;
  readonly old: number;
}

/** The switch's implementation of {@link PacketContext}; one instance is reused for every packet. */
export class PacketAccessContext implements PacketContext {
  private current: LockPacket | undefined;
  private readonly touched: RegisterArray[] = [];
  private readonly touchedOps: AccessOp[] = [];
  private readonly journal: JournalEntry[] = [];
  private order: StageOrder;
  private maxRank = -1;
  private label: string | undefined;

  constructor(private readonly pipeline: Pipeline) {
    this.order = pipeline.defaultOrder;
  }

  /** Starts a new packet: forgets the previous packet's accesses, journal and decision. */
  begin(packet: LockPacket): void {
    this.current = packet;
    this.touched.length = 0;
    this.touchedOps.length = 0;
    this.journal.length = 0;
    this.order = this.pipeline.defaultOrder;
    this.maxRank = -1;
    this.label = undefined;
  }

  get packet(): LockPacket {
    if (!this.current) throw new SwitchProgramError('stage-order', 'no packet is being processed');
    return this.current;
  }

  get decision(): string | undefined {
    return this.label;
  }

  get stageOrderName(): string {
    return this.order.name;
  }

  /** Undoes the current packet's writes, newest first. */
  rollback(): void {
    for (let i = this.journal.length - 1; i >= 0; i--) {
      const entry = this.journal[i] as JournalEntry;
      entry.array.set(entry.index, entry.old);
    }
    this.journal.length = 0;
  }

  read(array: RegisterArray, index: number): number {
    this.admit(array, index, 'read');
    return array.get(index);
  }

  write(array: RegisterArray, index: number, value: number): void {
    if (array.width === 1) this.refuseOneBit(array, 'write');
    this.admit(array, index, 'write');
    array.checkValue(value);
    this.store(array, index, value);
  }

  update<T>(array: RegisterArray, index: number, action: (old: number) => RegisterUpdate<T>): T {
    if (array.width === 1) this.refuseOneBit(array, 'update');
    this.admit(array, index, 'update');
    const result = action(array.get(index));
    array.checkValue(result.next);
    this.store(array, index, result.next);
    return result.out;
  }

  set(array: RegisterArray, index: number): 0 | 1 {
    return this.writeBit(array, index, 1, 'set');
  }

  clear(array: RegisterArray, index: number): 0 | 1 {
    return this.writeBit(array, index, 0, 'clear');
  }

  useStageOrder(name: string): void {
    const order = this.pipeline.stageOrder(name);
    if (!order) {
      throw new SwitchProgramError('stage-order', `${this.describe()}: stage order '${name}' was not declared at build time`);
    }
    if (this.touched.length > 0) {
      throw new SwitchProgramError('stage-order', `${this.describe()}: stage order '${name}' chosen after the packet already accessed '${this.touched[0]?.name}'`);
    }
    this.order = order;
  }

  decide(decision: string): void {
    this.label = decision;
  }

  private writeBit(array: RegisterArray, index: number, bit: 0 | 1, op: 'set' | 'clear'): 0 | 1 {
    if (array.width !== 1) {
      throw new SwitchProgramError('not-one-bit', `${this.describe()}: ${op} on '${array.name}', a ${array.width}-bit array; use write or update`);
    }
    this.admit(array, index, op);
    const old = array.get(index) as 0 | 1;
    this.store(array, index, bit);
    return old;
  }

  private store(array: RegisterArray, index: number, value: number): void {
    this.journal.push({ array, index, old: array.get(index) });
    array.set(index, value);
  }

  /** Enforces rules 1, 3 and 4 before any access touches state. */
  private admit(array: RegisterArray, index: number, op: AccessOp): void {
    if (!this.pipeline.owns(array)) {
      throw new SwitchProgramError('foreign-array', `${this.describe()}: '${array.name}' is not an array of this switch's pipeline`);
    }
    const earlier = this.touched.indexOf(array);
    if (earlier >= 0) {
      throw new SwitchProgramError(
        'double-access',
        `${this.describe()}: second access to register array '${array.name}' (${this.touchedOps[earlier]} then ${op}); one access per array per packet`,
      );
    }
    const rank = this.order.rank[array.stage] as number;
    if (rank < this.maxRank) {
      const last = this.touched.find((a) => this.order.rank[a.stage] === this.maxRank) as RegisterArray;
      throw new SwitchProgramError(
        'stage-order',
        `${this.describe()}: ${op} of '${array.name}' (stage ${array.stage}) after '${last.name}' (stage ${last.stage}) goes backwards in stage order '${this.order.name}' [${this.order.stages.join(', ')}]`,
      );
    }
    if (!Number.isInteger(index) || index < 0 || index >= array.length) array.get(index); // throws RegisterAccessError
    this.touched.push(array);
    this.touchedOps.push(op);
    this.maxRank = rank;
  }

  private refuseOneBit(array: RegisterArray, op: 'write' | 'update'): never {
    throw new SwitchProgramError(
      'one-bit-conditional',
      `${this.describe()}: ${op} on 1-bit array '${array.name}'; 1-bit registers support only read, set and clear (no update that depends on the old bit)`,
    );
  }

  private describe(): string {
    const p = this.current;
    return p ? `packet ${p.type} lock ${p.lock} from machine ${p.machine}` : 'control plane';
  }
}
