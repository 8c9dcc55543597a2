import type { Completion, LockId, NodeId, VerbOpcode, VerbStatus, WorkRequest } from '@lockfabric/ports';

export const VERB_OPCODES: readonly VerbOpcode[] = ['read', 'write', 'cas', 'faa', 'masked-cas', 'masked-faa'];

export type OpcodeCounts = Record<VerbOpcode, number>;

/** Plain, JSON-able view of a NIC's counters. Record keys are decimal node or lock ids. */
export interface NicCountersSnapshot {
  readonly node: NodeId;
  /** Work requests executed, failed ones included. */
  readonly verbs: number;
  /** Doorbells rung: one per posted batch. */
  readonly doorbells: number;
  readonly byOpcode: OpcodeCounts;
  readonly byInitiator: Record<string, { readonly verbs: number; readonly byOpcode: OpcodeCounts }>;
  /** Verbs that named a lock (`wr.lock`), per lock; only locks touched appear. */
  readonly byLock: Record<string, number>;
  /** Verbs this node issued to its own NIC (ALock must show 0 for its local cohort). */
  readonly loopbackVerbs: number;
  readonly errors: number;
  readonly errorsByStatus: Partial<Record<VerbStatus, number>>;
  /** Payload bytes of successful READs and WRITEs (atomics are counted by opcode only). */
  readonly bytesRead: number;
  readonly bytesWritten: number;
}

const opcodeIndex = new Map<string, number>(VERB_OPCODES.map((op, i) => [op, i]));

/** Counters of one NIC: the "MN-NIC IOPS" figures of DecLock and ShiftLock, and the loopback audit of ALock. */
export class NicCounters {
  #verbs = 0;
  #doorbells = 0;
  #loopback = 0;
  #errors = 0;
  #bytesRead = 0;
  #bytesWritten = 0;
  // Arrays indexed by opcode keep the per-verb path free of string keys and allocation.
  #byOpcode = new Array<number>(VERB_OPCODES.length).fill(0);
  #byInitiator = new Map<NodeId, number[]>();
  #byLock = new Map<LockId, number>();
  #errorsByStatus = new Map<VerbStatus, number>();

  readonly #perLock: boolean;

  /**
   * @param options.perLock count verbs per lock (`byLock`, `lockVerbs`); default true. A run over
   * millions of locks turns it off: the map would grow to one entry per lock ever touched, larger
   * than the lock words themselves.
   */
  constructor(
    readonly node: NodeId,
    options: { readonly perLock?: boolean } = {},
  ) {
    this.#perLock = options.perLock ?? true;
  }

  recordDoorbell(): void {
    this.#doorbells += 1;
  }

  /** Counts one executed work request and its completion. */
  record(wr: WorkRequest, initiator: NodeId, completion: Completion): void {
    this.#verbs += 1;
    const op = opcodeIndex.get(wr.op);
    let perInitiator = this.#byInitiator.get(initiator);
    if (!perInitiator) {
      perInitiator = new Array<number>(VERB_OPCODES.length + 1).fill(0);
      this.#byInitiator.set(initiator, perInitiator);
    }
    perInitiator[VERB_OPCODES.length] = (perInitiator[VERB_OPCODES.length] ?? 0) + 1;
    if (op !== undefined) {
      this.#byOpcode[op] = (this.#byOpcode[op] ?? 0) + 1;
      perInitiator[op] = (perInitiator[op] ?? 0) + 1;
    }
    if (initiator === this.node) this.#loopback += 1;
    if (wr.lock !== undefined && this.#perLock) this.#byLock.set(wr.lock, (this.#byLock.get(wr.lock) ?? 0) + 1);
    if (completion.status !== 'ok') {
      this.#errors += 1;
      this.#errorsByStatus.set(completion.status, (this.#errorsByStatus.get(completion.status) ?? 0) + 1);
      return;
    }
    if (wr.op === 'read') this.#bytesRead += wr.length;
    else if (wr.op === 'write') this.#bytesWritten += wr.data.length;
  }

  /** Verbs counted against `lock` so far (0 when per-lock counting is off). */
  lockVerbs(lock: LockId): number {
    return this.#byLock.get(lock) ?? 0;
  }

  snapshot(): NicCountersSnapshot {
    const byInitiator: Record<string, { verbs: number; byOpcode: OpcodeCounts }> = {};
    for (const [node, counts] of [...this.#byInitiator].sort((a, b) => a[0] - b[0])) {
      byInitiator[String(node)] = { verbs: counts[VERB_OPCODES.length] ?? 0, byOpcode: toOpcodeCounts(counts) };
    }
    const byLock: Record<string, number> = {};
    for (const [lock, count] of [...this.#byLock].sort((a, b) => a[0] - b[0])) byLock[String(lock)] = count;
    return {
      node: this.node,
      verbs: this.#verbs,
      doorbells: this.#doorbells,
      byOpcode: toOpcodeCounts(this.#byOpcode),
      byInitiator,
      byLock,
      loopbackVerbs: this.#loopback,
      errors: this.#errors,
      errorsByStatus: Object.fromEntries(this.#errorsByStatus),
      bytesRead: this.#bytesRead,
      bytesWritten: this.#bytesWritten,
    };
  }

  reset(): void {
    this.#verbs = 0;
    this.#doorbells = 0;
    this.#loopback = 0;
    this.#errors = 0;
    this.#bytesRead = 0;
    this.#bytesWritten = 0;
    this.#byOpcode.fill(0);
    this.#byInitiator.clear();
    this.#byLock.clear();
    this.#errorsByStatus.clear();
  }
}

function toOpcodeCounts(counts: readonly number[]): OpcodeCounts {
  const out = {} as OpcodeCounts;
  VERB_OPCODES.forEach((op, i) => {
    out[op] = counts[i] ?? 0;
  });
  return out;
}
