import type { WorkRequest } from '@lockfabric/ports';
import { HorizonMap } from './horizon-map.js';

/**
 * Virtual-time cost model of one NIC. Service times are how long the target NIC is busy with a work
 * request (DMA to host memory, address lock held), not the network round trip, which the substrate's
 * link model adds on top.
 */
export interface NicTimingModel {
  /** Fixed cost of a READ; the payload adds `perByteNs` per byte. */
  readonly readBaseNs: number;
  /** Fixed cost of a WRITE; the payload adds `perByteNs` per byte. */
  readonly writeBaseNs: number;
  readonly perByteNs: number;
  readonly casNs: number;
  readonly faaNs: number;
  /** 8-byte extended (masked) CAS or FAA. */
  readonly maskedAtomic8Ns: number;
  /** 16-byte extended (masked) CAS or FAA. */
  readonly maskedAtomic16Ns: number;
  /** Work requests the NIC may start per second (inbound IOPS cap); absent means uncapped. */
  readonly iopsCap?: number;
  /** Inbound ceiling on atomics (CAS, FAA, extended) per second; absent means uncapped. */
  readonly atomicIops?: number;
  /** Inbound ceiling on READs and WRITEs per second; absent means uncapped. */
  readonly readWriteIops?: number;
  /**
   * Strict FIFO (default true): an atomic waiting for its address also holds back every request
   * behind it. With false, only same-address atomics wait and the rest of the queue flows past.
   */
  readonly headOfLineBlocking?: boolean;
}

/**
 * Defaults, and why:
 * - READ/WRITE ≈ 50 ns + 0.08 ns/byte: one PCIe DMA per request, payload at ≈ 12.5 GB/s (100 Gb/s).
 * - CAS/FAA 150 ns: an RNIC atomic is a read-modify-write over PCIe (read, compute, write back) with
 *   the address locked, about three small transfers; one hot word then tops out near 6.7 M atomics/s,
 *   the few-Mops-per-address ceiling RDMA lock papers (DSLR, ShiftLock) report.
 * - Masked atomics 200 ns (8-byte) and 240 ns (16-byte): extended atomics take a slower path in the
 *   NIC, and ShiftLock attributes part of its reader gap to 16-byte atomics being slower than 8-byte.
 * - No IOPS ceiling: this is the `ideal` NIC; `sim` runs take their NIC from a cost model
 *   (cost-model.ts), whose `paper` default has the ceilings.
 */
export const DEFAULT_NIC_TIMING: NicTimingModel = Object.freeze({
  readBaseNs: 50,
  writeBaseNs: 50,
  perByteNs: 0.08,
  casNs: 150,
  faaNs: 150,
  maskedAtomic8Ns: 200,
  maskedAtomic16Ns: 240,
  headOfLineBlocking: true,
});

/** Throws a RangeError naming every bad field; a model that cannot be simulated is a configuration bug. */
export function validateNicTimingModel(model: NicTimingModel): void {
  const issues: string[] = [];
  const costs = ['readBaseNs', 'writeBaseNs', 'perByteNs', 'casNs', 'faaNs', 'maskedAtomic8Ns', 'maskedAtomic16Ns'] as const;
  for (const key of costs) {
    const value = model[key];
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) issues.push(`${key} must be a finite number ≥ 0, got ${value}`);
  }
  for (const key of ['iopsCap', 'atomicIops', 'readWriteIops'] as const) {
    const value = model[key];
    if (value !== undefined && (!Number.isFinite(value) || value <= 0)) issues.push(`${key} must be a positive number of requests per second, got ${value}`);
  }
  if (issues.length > 0) throw new RangeError(`invalid NIC timing model: ${issues.join('; ')}`);
}

/** How long the NIC is busy with `wr` under `model`. */
export function nicServiceNs(model: NicTimingModel, wr: WorkRequest): number {
  switch (wr.op) {
    case 'read':
      return model.readBaseNs + model.perByteNs * Math.max(0, wr.length);
    case 'write':
      return model.writeBaseNs + model.perByteNs * wr.data.length;
    case 'cas':
      return model.casNs;
    case 'faa':
      return model.faaNs;
    case 'masked-cas':
    case 'masked-faa':
      return wr.width === 16 ? model.maskedAtomic16Ns : model.maskedAtomic8Ns;
    default:
      return model.readBaseNs;
  }
}

/**
 * How much of the NIC's inbound issue capacity `wr` takes, in ns: the inverse of the ceiling of
 * its class (atomics or READ/WRITE), or of `iopsCap` when that is tighter; 0 when uncapped. A
 * mixed stream then saturates at a weighted rate: an atomic costs as much as
 * readWriteIops / atomicIops READs.
 */
export function issueCostNs(model: NicTimingModel, wr: WorkRequest): number {
  const classIops = atomicWordCount(wr) > 0 ? model.atomicIops : model.readWriteIops;
  const classNs = classIops === undefined ? 0 : 1e9 / classIops;
  return Math.max(classNs, model.iopsCap === undefined ? 0 : 1e9 / model.iopsCap);
}

/** What a NIC's inbound ceiling did over a run. */
export interface NicLoad {
  /** Requests admitted. */
  readonly admitted: number;
  /** Sum of their issue costs: the time the ceiling was busy (utilisation = busyNs / elapsed). */
  readonly busyNs: number;
  /** Requests that waited for an issue slot (the ceiling, not their address, held them). */
  readonly throttled: number;
  /** Sum of those waits. */
  readonly throttledNs: number;
  /** READs and WRITEs admitted, and how many of them waited for the ceiling (data verbs queued behind others). */
  readonly readWrites: number;
  readonly throttledReadWrites: number;
  /** Sum of the waits of those READs and WRITEs. */
  readonly throttledReadWriteNs: number;
  /** First arrival and last issue, for the span the load covers. */
  readonly firstArrivalNs: number;
  readonly lastIssueNs: number;
}

/** When a work request runs on the NIC, in virtual nanoseconds. */
export interface NicSlot {
  readonly startNs: number;
  readonly doneNs: number;
}

export interface AdmitOptions {
  /** Completions of one queue pair are delivered in order (RC): `doneNs` never precedes an earlier one of the same pair. */
  readonly queuePair?: number;
}

const WORD_BITS = 2 ** 40;
const MAX_NUMERIC_REGION = 2 ** 12;

/**
 * Pure queueing model of one NIC in virtual time. Requests start in admission order (FIFO), no two
 * starts closer than the IOPS cap allows; service overlaps (the NIC is pipelined), except that an
 * atomic cannot start before the previous atomic on the same 8-byte word is done (the NIC's
 * address lock; a 16-byte atomic holds both its words). Deterministic: the same calls give the
 * same slots. Admit requests in non-decreasing arrival order, as an event loop does.
 */
export class NicScheduler {
  readonly model: NicTimingModel;
  readonly #headOfLine: boolean;
  #lastIssueNs = Number.NEGATIVE_INFINITY;
  /** Issue cost of the request issued last: the next may not issue before lastIssue + this. */
  #lastCostNs = 0;
  #load = { admitted: 0, busyNs: 0, throttled: 0, throttledNs: 0, readWrites: 0, throttledReadWrites: 0, throttledReadWriteNs: 0, firstArrivalNs: Number.NaN, lastIssueNs: Number.NaN };
  readonly #atomicDone = new HorizonMap<number | string>();
  readonly #queuePairDone = new HorizonMap<number>();

  /** Fields left out of `model` take their `DEFAULT_NIC_TIMING` value. */
  constructor(model: Partial<NicTimingModel> = {}) {
    const merged: NicTimingModel = { ...DEFAULT_NIC_TIMING, ...definedFields(model) };
    validateNicTimingModel(merged);
    this.model = merged;
    this.#headOfLine = model.headOfLineBlocking ?? true;
  }

  admit(wr: WorkRequest, arrivalNs: number, options: AdmitOptions = NO_OPTIONS): NicSlot {
    const costNs = this.issueCost(wr);
    const issueNs = Math.max(arrivalNs, this.#lastIssueNs + this.#lastCostNs);
    this.#lastCostNs = costNs;
    const load = this.#load;
    load.admitted++;
    load.busyNs += costNs;
    if (Number.isNaN(load.firstArrivalNs)) load.firstArrivalNs = arrivalNs;
    load.lastIssueNs = issueNs;
    const readWrite = wr.op === 'read' || wr.op === 'write';
    if (readWrite) load.readWrites++;
    if (issueNs > arrivalNs && costNs > 0) {
      load.throttled++;
      load.throttledNs += issueNs - arrivalNs;
      if (readWrite) {
        load.throttledReadWrites++;
        load.throttledReadWriteNs += issueNs - arrivalNs;
      }
    }
    let startNs = issueNs;
    const words = atomicWordCount(wr);
    for (let i = 0; i < words; i++) startNs = Math.max(startNs, this.#atomicDone.get(atomicWord(wr, i)) ?? startNs);
    let doneNs = startNs + nicServiceNs(this.model, wr);
    // Under strict FIFO the whole queue waited for this request, so it marks the issue point.
    const nowNs = this.#headOfLine ? startNs : issueNs;
    this.#lastIssueNs = nowNs;
    for (let i = 0; i < words; i++) this.#atomicDone.set(atomicWord(wr, i), doneNs, nowNs);
    if (options.queuePair !== undefined) {
      doneNs = Math.max(doneNs, this.#queuePairDone.get(options.queuePair) ?? doneNs);
      this.#queuePairDone.set(options.queuePair, doneNs, nowNs);
    }
    return { startNs, doneNs };
  }

  /** Admits a doorbell batch in order; `doneNs` is when its last completion is ready. */
  admitBatch(batch: readonly WorkRequest[], arrivalNs: number, options: AdmitOptions = {}): { slots: NicSlot[]; doneNs: number } {
    const slots = batch.map((wr) => this.admit(wr, arrivalNs, options));
    return { slots, doneNs: slots.reduce((max, s) => Math.max(max, s.doneNs), arrivalNs) };
  }

  /** The inbound ceiling's load so far. */
  get load(): NicLoad {
    return { ...this.#load };
  }

  /** Issue cost of `wr` (see issueCostNs); a seam for the tests' broken variants. */
  protected issueCost(wr: WorkRequest): number {
    return issueCostNs(this.model, wr);
  }

  /** Per-word and per-queue-pair entries still remembered; bounded by the requests in flight. */
  get trackedEntries(): number {
    return this.#atomicDone.size + this.#queuePairDone.size;
  }

  reset(): void {
    this.#lastIssueNs = Number.NEGATIVE_INFINITY;
    this.#lastCostNs = 0;
    this.#load = { admitted: 0, busyNs: 0, throttled: 0, throttledNs: 0, readWrites: 0, throttledReadWrites: 0, throttledReadWriteNs: 0, firstArrivalNs: Number.NaN, lastIssueNs: Number.NaN };
    this.#atomicDone.clear();
    this.#queuePairDone.clear();
  }
}

function definedFields(model: Partial<NicTimingModel>): Partial<NicTimingModel> {
  return Object.fromEntries(Object.entries(model).filter(([, value]) => value !== undefined));
}

const NO_OPTIONS: AdmitOptions = {};

/** How many 8-byte words an atomic locks in the NIC; none for READ and WRITE. */
function atomicWordCount(wr: WorkRequest): number {
  return wr.op === 'cas' || wr.op === 'faa' ? 1 : wr.op === 'masked-cas' || wr.op === 'masked-faa' ? (wr.width === 16 ? 2 : 1) : 0;
}

/** Key of the `i`-th word an atomic locks (computed per use: no array per verb on the hot path). */
function atomicWord(wr: WorkRequest, i: number): number | string {
  const { region, offset } = wr.addr;
  const word = Math.floor(offset / 8) + i;
  const numeric = Number.isInteger(region) && region >= 0 && region < MAX_NUMERIC_REGION && word >= 0 && word < WORD_BITS;
  return numeric ? region * WORD_BITS + word : `${region}/${word}`;
}
