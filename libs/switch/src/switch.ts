import type { LockPacket, NodeId, PacketType } from '@lockfabric/ports';
import { egressProblem } from './egress.js';
import type { EgressAction, EgressKind } from './egress.js';
import { RegisterAccessError, SwitchControlError, SwitchProgramError } from './errors.js';
import type { MatchTable, TableRange, TableValue } from './match-table.js';
import { PacketAccessContext } from './packet-context.js';
import { Pipeline } from './pipeline.js';
import type { PipelineOptions } from './pipeline.js';
import type { SwitchProgram } from './program.js';
import type { RegisterArray } from './register-array.js';
import { SplitRegisterArray } from './split-register-array.js';
import { DEFAULT_SWITCH_TIMING } from './timing.js';
import type { SwitchTimingModel } from './timing.js';

/** What `ingest` does when the program throws (a rule violation or a bug). */
export type ProgramErrorPolicy = 'throw' | 'drop';

export interface SwitchOptions {
  readonly pipeline?: PipelineOptions;
  readonly timing?: Partial<SwitchTimingModel>;
  /**
   * `throw` (default) rethrows out of `ingest`, so tests and the simulator stop at the bug;
   * `drop` drops the packet with reason `program-error` and keeps going, for long-running services.
   * Either way the packet's register writes are undone and the error is counted.
   */
  readonly onProgramError?: ProgramErrorPolicy;
}

export interface SwitchCounters {
  readonly packets: number;
  readonly packetsByType: Readonly<Partial<Record<PacketType, number>>>;
  /** Per decision label set by the program (`ctx.decide`), else the egress kinds joined by `+`. */
  readonly decisions: Readonly<Record<string, number>>;
  readonly egress: Readonly<Record<EgressKind, number>>;
  readonly dropsByReason: Readonly<Record<string, number>>;
  readonly programErrors: number;
  readonly programErrorsByKind: Readonly<Record<string, number>>;
}

export interface ArrayDescription {
  readonly name: string;
  readonly width: number;
  readonly length: number;
  readonly stage: number;
  readonly bits: number;
  readonly initial: number;
  /** The split array this one is a part of. */
  readonly splitOf?: string;
}

export interface SwitchDescription {
  readonly program: string;
  readonly stages: readonly { readonly index: number; readonly capacityBits: number; readonly usedBits: number; readonly arrays: readonly string[] }[];
  readonly arrays: readonly ArrayDescription[];
  readonly splitArrays: readonly { readonly name: string; readonly width: number; readonly length: number; readonly parts: readonly string[] }[];
  readonly tables: readonly { readonly name: string; readonly exactEntries: number; readonly ranges: number }[];
  readonly stageOrders: readonly { readonly name: string; readonly stages: readonly number[]; readonly reason: string }[];
  readonly registerBits: number;
  readonly registerBytes: number;
  readonly capacityBits: number;
  readonly timing: SwitchTimingModel;
}

/** One piece of a logical register range that lies in one physical array. */
interface Segment {
  readonly array: RegisterArray;
  readonly offset: number;
  readonly from: number;
  readonly count: number;
}

/**
 * The emulated programmable switch (DESIGN §3.2): one program on one pipeline. `ingest` processes a
 * packet to completion and returns its egress actions — line rate, no queueing; when to deliver
 * them is the substrate's business (`timing`, and the FaultInjector). The control-plane methods
 * are not subject to the per-packet rules: they model the switch CPU writing over PCIe.
 */
/** A switch's registers as its control plane reads and writes them (FissLock's S3 writes the decider through it). */
export interface RegisterControl {
  readonly arrays: readonly string[];
  readRegister(array: string, index: number): number;
  fill(array: string, value: number): void;
  write(array: string, index: number, values: readonly number[]): void;
}

export class Switch {
  readonly pipeline: Pipeline;
  readonly timing: SwitchTimingModel;
  private readonly ctx: PacketAccessContext;
  private readonly policy: ProgramErrorPolicy;
  private packets = 0;
  private readonly byType = new Map<PacketType, number>();
  private readonly byDecision = new Map<string, number>();
  private readonly byEgress = new Map<EgressKind, number>();
  private readonly byDropReason = new Map<string, number>();
  private readonly byErrorKind = new Map<string, number>();

  constructor(
    readonly program: SwitchProgram,
    options: SwitchOptions = {},
  ) {
    this.pipeline = new Pipeline(options.pipeline);
    this.timing = { ...DEFAULT_SWITCH_TIMING, ...options.timing };
    this.policy = options.onProgramError ?? 'throw';
    program.build(this.pipeline);
    this.pipeline.seal();
    this.ctx = new PacketAccessContext(this.pipeline);
  }

  /** Runs the program on one packet that entered from `fromMachine`. */
  ingest(packet: LockPacket, fromMachine: NodeId): EgressAction[] {
    this.packets++;
    bump(this.byType, packet.type);
    const ctx = this.ctx;
    ctx.begin(packet);
    let actions: EgressAction[];
    try {
      actions = this.program.process(packet, { machine: fromMachine }, ctx);
      for (const action of actions) {
        const problem = egressProblem(action);
        if (problem) throw new SwitchProgramError('bad-egress', `packet ${packet.type} lock ${packet.lock}: ${problem}`);
      }
    } catch (error) {
      ctx.rollback();
      bump(this.byErrorKind, errorKind(error));
      bump(this.byDecision, 'program-error');
      if (this.policy === 'throw') throw error;
      actions = [{ kind: 'drop', reason: 'program-error' }];
      this.countEgress(actions);
      return actions;
    }
    bump(this.byDecision, ctx.decision ?? defaultDecision(actions));
    this.countEgress(actions);
    return actions;
  }

  counters(): SwitchCounters {
    const egress: Record<EgressKind, number> = { unicast: 0, multicast: 0, drop: 0, bounce: 0 };
    for (const [kind, n] of this.byEgress) egress[kind] = n;
    const programErrorsByKind = Object.fromEntries(this.byErrorKind);
    return {
      packets: this.packets,
      packetsByType: Object.fromEntries(this.byType),
      decisions: Object.fromEntries(this.byDecision),
      egress,
      dropsByReason: Object.fromEntries(this.byDropReason),
      programErrors: Object.values(programErrorsByKind).reduce((a, b) => a + b, 0),
      programErrorsByKind,
    };
  }

  resetCounters(): void {
    this.packets = 0;
    for (const map of [this.byType, this.byDecision, this.byEgress, this.byDropReason, this.byErrorKind]) map.clear();
  }

  /** A switch reboot (FissLock S0): every register back to its initial value, counters cleared; table entries stay installed. */
  restart(): void {
    this.pipeline.resetRegisters();
    this.resetCounters();
  }

  // ---- control plane: registers (by physical or split-array name, logical index) ----

  readRegister(arrayName: string, index: number): number {
    const [segment] = this.segments(arrayName, index, 1);
    return (segment as Segment).array.get((segment as Segment).offset);
  }

  writeRegister(arrayName: string, index: number, value: number): void {
    const [segment] = this.segments(arrayName, index, 1);
    (segment as Segment).array.set((segment as Segment).offset, value);
  }

  /** Values of `count` elements from `start` (recovery scans, tools). */
  readRegisters(arrayName: string, start: number, count: number): Uint32Array {
    const out = new Uint32Array(count);
    for (const s of this.segments(arrayName, start, count)) out.set(s.array.readRange(s.offset, s.count), s.from);
    return out;
  }

  /** Writes `values` from `start`; all values are checked before anything is written. */
  writeRegisters(arrayName: string, start: number, values: ArrayLike<number>): void {
    const segments = this.segments(arrayName, start, values.length);
    const first = segments[0];
    if (first) for (let i = 0; i < values.length; i++) first.array.checkValue(values[i] as number);
    for (const s of segments) s.array.writeRange(s.offset, values, s.from, s.count);
  }

  /** Sets elements [start, end) of an array to `value` (recovery: "every other lock free"). */
  fillRegisters(arrayName: string, value: number, start = 0, end?: number): void {
    const last = end ?? this.resolve(arrayName).length;
    for (const s of this.segments(arrayName, start, last - start)) s.array.fill(value, s.offset, s.offset + s.count);
  }

  // ---- control plane: match-action tables ----

  table(name: string): MatchTable {
    const table = this.pipeline.table(name);
    if (!table) {
      const known = this.pipeline.tables().map((t) => t.name);
      throw new SwitchControlError(`program '${this.program.name}' has no table '${name}' (tables: ${known.join(', ') || 'none'})`);
    }
    return table;
  }

  setTableEntry(tableName: string, key: number, value: TableValue): void {
    const table = this.table(tableName);
    table.setEntry(key, table.accept(value));
  }

  deleteTableEntry(tableName: string, key: number): boolean {
    return this.table(tableName).deleteEntry(key);
  }

  /** Installs `[start, end) → value`, e.g. a lock-id range; `end` may be `Infinity`. */
  setTableRange(tableName: string, start: number, end: number, value: TableValue): void {
    const table = this.table(tableName);
    table.setRange(start, end, table.accept(value));
  }

  deleteTableRange(tableName: string, start: number, end: number): boolean {
    return this.table(tableName).deleteRange(start, end);
  }

  tableEntries(tableName: string): { readonly exact: readonly (readonly [number, TableValue])[]; readonly ranges: readonly TableRange<TableValue>[] } {
    return this.table(tableName).entries();
  }

  /**
   * The registers as a control plane writes them (the switch CPU; what switch-dataplane exposes
   * over gRPC): every array by name, split arrays by their logical name.
   */
  registerControl(): RegisterControl {
    const d = this.describe();
    return {
      arrays: [...d.splitArrays.map((s) => s.name), ...d.arrays.map((a) => a.name)],
      readRegister: (array, index) => this.readRegister(array, index),
      fill: (array, value) => this.fillRegisters(array, value),
      write: (array, index, values) => this.writeRegisters(array, index, values),
    };
  }

  describe(): SwitchDescription {
    const splits = this.pipeline.splitArrays();
    const partOf = new Map<RegisterArray, string>();
    for (const split of splits) for (const part of split.parts) partOf.set(part, split.name);
    return {
      program: this.program.name,
      stages: this.pipeline.maus.map((mau) => ({
        index: mau.index,
        capacityBits: mau.capacityBits,
        usedBits: mau.usedBits,
        arrays: mau.arrays.map((a) => a.name),
      })),
      arrays: this.pipeline.arrays().map((a) => {
        const splitOf = partOf.get(a);
        const base = { name: a.name, width: a.width, length: a.length, stage: a.stage, bits: a.sizeBits, initial: a.initial };
        return splitOf === undefined ? base : { ...base, splitOf };
      }),
      splitArrays: splits.map((s) => ({ name: s.name, width: s.width, length: s.length, parts: s.parts.map((p) => p.name) })),
      tables: this.pipeline.tables().map((t) => {
        const entries = t.entries();
        return { name: t.name, exactEntries: entries.exact.length, ranges: entries.ranges.length };
      }),
      stageOrders: this.pipeline.stageOrders().map((o) => ({ name: o.name, stages: o.stages, reason: o.reason })),
      registerBits: this.pipeline.registerBits(),
      registerBytes: this.pipeline.registerBytes(),
      capacityBits: this.pipeline.capacityBits(),
      timing: this.timing,
    };
  }

  private resolve(name: string): RegisterArray | SplitRegisterArray {
    const register = this.pipeline.register(name);
    if (!register) {
      const known = [...this.pipeline.splitArrays().map((s) => s.name), ...this.pipeline.arrays().map((a) => a.name)];
      throw new SwitchControlError(`program '${this.program.name}' has no register array '${name}' (arrays: ${known.join(', ') || 'none'})`);
    }
    return register;
  }

  /** Splits the logical range [start, start+count) of `name` into per-part pieces, checking bounds. */
  private segments(name: string, start: number, count: number): Segment[] {
    const register = this.resolve(name);
    if (!Number.isInteger(start) || !Number.isInteger(count) || start < 0 || count < 0 || start + count > register.length) {
      throw new RegisterAccessError(name, `range [${start}, ${start + count}) is outside [0, ${register.length})`);
    }
    if (!(register instanceof SplitRegisterArray)) return [{ array: register, offset: start, from: 0, count }];
    const segments: Segment[] = [];
    let index = start;
    while (index < start + count) {
      const { array, offset } = register.locate(index);
      const n = Math.min(array.length - offset, start + count - index);
      segments.push({ array, offset, from: index - start, count: n });
      index += n;
    }
    return segments;
  }

  private countEgress(actions: readonly EgressAction[]): void {
    for (const action of actions) {
      bump(this.byEgress, action.kind);
      if (action.kind === 'drop') bump(this.byDropReason, action.reason);
    }
  }
}

function bump<K>(map: Map<K, number>, key: K): void {
  map.set(key, (map.get(key) ?? 0) + 1);
}

function errorKind(error: unknown): string {
  if (error instanceof SwitchProgramError) return error.kind;
  if (error instanceof RegisterAccessError) return 'register-access';
  return 'exception';
}

function defaultDecision(actions: readonly EgressAction[]): string {
  if (actions.length === 0) return 'none';
  return [...new Set(actions.map((a) => a.kind))].sort().join('+');
}
