import { SwitchProgramError } from './errors.js';
import { Mau } from './mau.js';
import { MatchTable } from './match-table.js';
import type { MatchTableOptions, TableValue } from './match-table.js';
import type { RegisterArray, RegisterWidth } from './register-array.js';
import { SplitRegisterArray } from './split-register-array.js';

/** Ingress MAUs of the FissLock testbed ASIC (FissLock §6.1). */
export const DEFAULT_INGRESS_STAGES = 12;

export interface PipelineOptions {
  /** Number of ingress MAUs; default 12. */
  readonly stages?: number;
  /** Stateful memory per MAU in bits, one figure for all or one per stage; default 560 KB. */
  readonly mauCapacityBits?: number | readonly number[];
}

export interface ArraySpec {
  readonly name: string;
  readonly width: RegisterWidth;
  readonly length: number;
  readonly stage: number;
  readonly initial?: number;
}

export interface SplitArraySpec {
  readonly name: string;
  readonly width: RegisterWidth;
  readonly length: number;
  /** One stage per part; part k covers indexes [k·L, (k+1)·L) with L = ceil(length / stages.length). */
  readonly stages: readonly number[];
  readonly initial?: number;
}

/**
 * The order in which a packet visits the stages. The default is 0, 1, … N-1. A program may declare
 * another permutation, with the reason, for one kind of packet — FissLock's ACQUIRE visits Free
 * and R/W before Check (FissLock spec §12.3) — a documented departure from a fixed hardware order
 * that keeps every other rule (one access per array per packet, forward-only through the order).
 */
export interface StageOrder {
  readonly name: string;
  readonly stages: readonly number[];
  readonly reason: string;
  /** `rank[stage]` = position of that stage in the order. */
  readonly rank: readonly number[];
}

/** The ingress pipeline: N MAUs, the register arrays and tables a program allocated at build time. */
export class Pipeline {
  readonly maus: readonly Mau[];
  readonly defaultOrder: StageOrder;
  private readonly registers = new Map<string, RegisterArray | SplitRegisterArray>();
  private readonly physical = new Set<RegisterArray>();
  private readonly tableByName = new Map<string, MatchTable>();
  private readonly orders = new Map<string, StageOrder>();
  private isSealed = false;

  constructor(options: PipelineOptions = {}) {
    const count = options.stages ?? DEFAULT_INGRESS_STAGES;
    if (!Number.isSafeInteger(count) || count <= 0) {
      throw new SwitchProgramError('bad-array', `a pipeline needs a positive integer number of stages, got ${count}`);
    }
    const capacities = options.mauCapacityBits;
    if (Array.isArray(capacities) && capacities.length !== count) {
      throw new SwitchProgramError('bad-array', `mauCapacityBits lists ${capacities.length} stages but the pipeline has ${count}`);
    }
    const admit = (name: string): void => this.admit(name);
    this.maus = Array.from({ length: count }, (_, index) => {
      const capacityBits = typeof capacities === 'number' ? capacities : (capacities as readonly number[] | undefined)?.[index];
      return new Mau(capacityBits === undefined ? { index, admit } : { index, capacityBits, admit });
    });
    const identity = this.maus.map((mau) => mau.index);
    this.defaultOrder = { name: 'default', stages: identity, reason: 'packets flow forward through the pipeline', rank: identity };
  }

  get stageCount(): number {
    return this.maus.length;
  }

  get sealed(): boolean {
    return this.isSealed;
  }

  mau(stage: number): Mau {
    const mau = this.maus[stage];
    if (!mau) throw new SwitchProgramError('bad-array', `stage ${stage} does not exist (the pipeline has stages 0…${this.maus.length - 1})`);
    return mau;
  }

  addArray(spec: ArraySpec): RegisterArray {
    const array = this.mau(spec.stage).addArray(spec);
    this.registers.set(array.name, array);
    this.physical.add(array);
    return array;
  }

  /** Allocates one logical array as contiguous parts in several stages, all or nothing. */
  addSplitArray(spec: SplitArraySpec): SplitRegisterArray {
    this.admit(spec.name);
    const count = spec.stages.length;
    if (count === 0 || !Number.isSafeInteger(spec.length) || spec.length < count) {
      throw new SwitchProgramError('bad-array', `split array '${spec.name}': needs 1…length stages, got ${count} for length ${spec.length}`);
    }
    spec.stages.forEach((_, k) => this.admit(`${spec.name}[${k}]`));
    const partLength = Math.ceil(spec.length / count);
    const partLengths = spec.stages.map((_, k) => Math.min(partLength, spec.length - k * partLength));
    if (partLengths.some((length) => length <= 0)) {
      throw new SwitchProgramError('bad-array', `split array '${spec.name}': ${count} parts of ${partLength} leave an empty part`);
    }
    // check every stage's budget first so a failure leaves nothing half-allocated
    const demand = new Map<number, number>();
    spec.stages.forEach((stage, k) => demand.set(stage, (demand.get(stage) ?? 0) + spec.width * (partLengths[k] as number)));
    for (const [stage, bits] of demand) {
      this.mau(stage).checkFits(spec.name, bits, `part(s) of split array, ${spec.width} bits × ${bits / spec.width}`);
    }
    const parts = spec.stages.map((stage, k) =>
      this.addArray({ name: `${spec.name}[${k}]`, width: spec.width, length: partLengths[k] as number, stage, ...(spec.initial === undefined ? {} : { initial: spec.initial }) }),
    );
    const split = new SplitRegisterArray(spec.name, parts, partLength);
    this.registers.set(spec.name, split);
    return split;
  }

  addTable<V extends TableValue = TableValue>(name: string, options: MatchTableOptions<V> = {}): MatchTable<V> {
    this.admit(name);
    const table = new MatchTable<V>(name, options);
    this.tableByName.set(name, table);
    return table;
  }

  /** Declares a permutation of all stages that packets may follow instead of the default order. */
  declareStageOrder(name: string, stages: readonly number[], reason: string): StageOrder {
    this.checkOpen(`stage order '${name}'`);
    if (name === this.defaultOrder.name || this.orders.has(name)) {
      throw new SwitchProgramError('duplicate-name', `stage order '${name}' is already declared`);
    }
    const n = this.maus.length;
    const rank = new Array<number>(n).fill(-1);
    stages.forEach((stage, position) => {
      if (Number.isInteger(stage) && stage >= 0 && stage < n && rank[stage] === -1) rank[stage] = position;
      else rank.fill(-2);
    });
    if (stages.length !== n || rank.some((r) => r < 0)) {
      throw new SwitchProgramError('stage-order', `stage order '${name}' must list each of the ${n} stages exactly once, got [${stages.join(', ')}]`);
    }
    if (reason.trim() === '') throw new SwitchProgramError('stage-order', `stage order '${name}' needs a reason: it is a departure from the hardware order`);
    const order: StageOrder = { name, stages: [...stages], reason, rank };
    this.orders.set(name, order);
    return order;
  }

  stageOrder(name: string): StageOrder | undefined {
    return name === this.defaultOrder.name ? this.defaultOrder : this.orders.get(name);
  }

  stageOrders(): readonly StageOrder[] {
    return [this.defaultOrder, ...this.orders.values()];
  }

  /** A physical array or a split array by name. */
  register(name: string): RegisterArray | SplitRegisterArray | undefined {
    return this.registers.get(name);
  }

  /** Physical arrays in stage order, then allocation order. */
  arrays(): readonly RegisterArray[] {
    return this.maus.flatMap((mau) => mau.arrays);
  }

  splitArrays(): readonly SplitRegisterArray[] {
    return [...this.registers.values()].filter((r): r is SplitRegisterArray => r instanceof SplitRegisterArray);
  }

  table(name: string): MatchTable | undefined {
    return this.tableByName.get(name);
  }

  tables(): readonly MatchTable[] {
    return [...this.tableByName.values()];
  }

  owns(array: RegisterArray): boolean {
    return this.physical.has(array);
  }

  /** Stateful memory the program uses, in bits. */
  registerBits(): number {
    return this.maus.reduce((sum, mau) => sum + mau.usedBits, 0);
  }

  /** Stateful memory the program uses, in bytes (rounded up). */
  registerBytes(): number {
    return Math.ceil(this.registerBits() / 8);
  }

  capacityBits(): number {
    return this.maus.reduce((sum, mau) => sum + mau.capacityBits, 0);
  }

  /** Ends the build: later allocations throw. */
  seal(): void {
    this.isSealed = true;
  }

  /** Every register back to its initial value (switch reboot); tables are kept. */
  resetRegisters(): void {
    for (const array of this.physical) array.reset();
  }

  private admit(name: string): void {
    this.checkOpen(`'${name}'`);
    if (name === '' || this.registers.has(name) || this.tableByName.has(name)) {
      throw new SwitchProgramError('duplicate-name', `the name '${name}' is ${name === '' ? 'empty' : 'already taken by another array or table'}`);
    }
  }

  private checkOpen(what: string): void {
    if (this.isSealed) throw new SwitchProgramError('sealed', `cannot allocate ${what}: the program is built and the pipeline sealed`);
  }
}
