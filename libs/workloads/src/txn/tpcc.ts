import type { NodeId, Random } from '@lockfabric/ports';
import { uniformInt } from './rng.js';
import { pickByWeight } from './tatp.js';
import { MAX_TXN_LOCKS, txn } from './types.js';
import type { TxnLockRequest, TxnTemplate } from './types.js';

/**
 * TPC-C as lock sets.
 *
 * Per warehouse w (TPC-C cardinalities: 10 districts, 3 000 customers per district, 100 000 stock
 * rows), with lock granularity chosen the way FissLock §7.4 controls the lock count, by letting one
 * lock protect a range of records:
 *   warehouse row                                   1 lock
 *   district row (also the district's ORDER, NEW-ORDER, ORDER-LINE and HISTORY rows, which are
 *     inserted or taken under the district's next-order counter)                      10 locks
 *   customers, ranges of 10 consecutive ids        300 per district              3 000 locks
 *   stock, ranges of 33 consecutive item ids       ⌈100 000 / 33⌉                3 031 locks
 * = 6 042 locks per warehouse. The default of 10 warehouses (DSLR §6.2's low-contention setting)
 * gives 60 420 locks, within 0.2 % of the 60 490 locks of the TPC-C trace ShiftLock §4.4 runs.
 * ITEM is read-only in TPC-C and takes no lock.
 *
 * Each client has a home warehouse (drawn first from its stream, as TPC-C binds a terminal to one).
 * Transactions (standard mix):
 *   NEW_ORDER     45 %  X district, S customer, X the stock range of each of 5–15 order lines
 *                       (items by NURand(8191); 1 % of lines supplied by a remote warehouse).
 *                       Lines are cut at 14 so the set stays within 16 locks.
 *   PAYMENT       43 %  X warehouse, X district, X customer (15 % a customer of a remote warehouse)
 *   ORDER_STATUS   4 %  S district (the customer's last order), S customer
 *   DELIVERY       4 %  X district (its oldest new order), X that order's customer range. TPC-C
 *                       (clause 2.7.4) lets each district's delivery commit as its own database
 *                       transaction; we run one district per transaction to stay within 16 locks.
 *   STOCK_LEVEL    4 %  S district, S the stock ranges of the items of the district's most recent
 *                       order (5–15 lines); TPC-C reads the last 20 orders, which would need ~200
 *                       locks, so one order stands for them.
 * Exclusive requests, expected per 100 transactions: 45·(1 + ~9.9) + 43·3 + 4·2 ≈ 627 of ≈ 724, i.e.
 * about 86.6 % — ShiftLock §4.4 reports 86.5 % for its trace.
 *
 * Long-running reads (DSLR §6.4, Fig. 10), when `longReads.probability` > 0: with that probability
 * a client's next transaction is CUSTOMER_SCAN, a table-level lock on its home warehouse's CUSTOMER
 * table held for `scanNs` while it scans. Each warehouse gets a table lock (ids 0…W-1, first, so
 * 2PL's ascending order takes it before any row lock, as hierarchical locking does). Our protocols
 * have shared and exclusive modes only, no intention modes, so the conflict that matters — a scan
 * (S) against writers of customer rows (IX) — is mapped onto them: PAYMENT and DELIVERY take the
 * table lock shared (writers do not block one another, as IX–IX), the scan takes it exclusive (it
 * waits for the writers ahead of it and blocks those behind it, as S–IX). Two scans then exclude
 * each other, which S–S would not; at the γ of DSLR Fig. 10 (≤ 1 %) that is rare. Readers of
 * customer rows (NEW_ORDER, ORDER_STATUS: IS) take none. The scan draws `slots` lease slots (DSLR
 * §5.1 multi-slot leasing: its lease is slots·λ); 1 is DSLR's fixed lease.
 */
export const TPCC_DEFAULT_WAREHOUSES = 10;
export const TPCC_DISTRICTS = 10;
export const TPCC_CUSTOMERS_PER_DISTRICT = 3_000;
export const TPCC_ITEMS = 100_000;
export const TPCC_CUSTOMERS_PER_LOCK = 10;
export const TPCC_ITEMS_PER_LOCK = 33;
const CUSTOMER_LOCKS_PER_DISTRICT = TPCC_CUSTOMERS_PER_DISTRICT / TPCC_CUSTOMERS_PER_LOCK;
const STOCK_LOCKS_PER_WAREHOUSE = Math.ceil(TPCC_ITEMS / TPCC_ITEMS_PER_LOCK);
/** Order lines kept so that district + customer + lines stay within MAX_TXN_LOCKS. */
const MAX_ORDER_LINES = MAX_TXN_LOCKS - 2;

export const TPCC_MIX: readonly (readonly [string, number])[] = [
  ['NEW_ORDER', 45],
  ['PAYMENT', 43],
  ['ORDER_STATUS', 4],
  ['DELIVERY', 4],
  ['STOCK_LEVEL', 4],
];

/** DSLR §6.4's long-running reads in TPC-C (see above). */
export interface TpccLongReads {
  /** γ: probability that a transaction is a CUSTOMER_SCAN. */
  readonly probability: number;
  /** How long the scan holds its table lock (its execution time). */
  readonly scanNs: number;
  /** Lease slots the scan's acquire draws (DSLR multi-slot leasing; 1 = fixed lease). */
  readonly slots: number;
}

export const TPCC_SCAN = 'CUSTOMER_SCAN';
/** 20 ms: a scan of 30 000 customer rows at under 1 µs a row; twice DSLR's 10 ms default lease. */
export const TPCC_DEFAULT_SCAN_NS = 20_000_000;

export class TpccLayout {
  readonly lockCount: number;
  private readonly warehouseBase: number;
  private readonly districtBase: number;
  private readonly customerBase: number;
  private readonly stockBase: number;
  /**
   * CUSTOMER table locks, only when long reads are on (they alone need table locks). They come
   * first in the id space: 2PL's ascending order then takes the table lock before any row lock, as
   * hierarchical locking does, so a writer queued behind a scan holds no rows meanwhile.
   */
  private readonly tables: boolean;
  /**
   * Co-located placement (FissLock §7.4: ParLock and FissLock-Local put a lock on the node of the
   * clients that use it): lock ids interleave the warehouses, id = r·W + w for the r-th lock of
   * warehouse w, so with W a multiple of the node count n, ParLock's home `id mod n` is `w mod n`
   * for every lock of w. The client then takes a home warehouse of its own node (homeOf).
   */
  private readonly colocate: readonly NodeId[] | undefined;

  constructor(
    readonly warehouses: number,
    readonly longReads?: TpccLongReads,
    colocate?: readonly NodeId[],
  ) {
    this.colocate = colocate && colocate.length > 0 ? colocate : undefined;
    this.tables = longReads !== undefined && longReads.probability > 0;
    this.warehouseBase = this.tables ? warehouses : 0;
    this.districtBase = this.warehouseBase + warehouses;
    this.customerBase = this.districtBase + warehouses * TPCC_DISTRICTS;
    this.stockBase = this.customerBase + warehouses * TPCC_DISTRICTS * CUSTOMER_LOCKS_PER_DISTRICT;
    this.lockCount = this.stockBase + warehouses * STOCK_LOCKS_PER_WAREHOUSE;
  }

  /** The CUSTOMER table lock of warehouse w, when long reads are on. */
  customerTableLock(w: number): number | undefined {
    return this.tables ? w : undefined;
  }

  warehouseLock(w: number): number {
    return this.colocate ? this.interleaved(w, 0) : this.warehouseBase + w;
  }

  districtLock(w: number, d: number): number {
    return this.colocate ? this.interleaved(w, 1 + d) : this.districtBase + w * TPCC_DISTRICTS + d;
  }

  customerLock(w: number, d: number, c: number): number {
    const r = d * CUSTOMER_LOCKS_PER_DISTRICT + Math.floor(c / TPCC_CUSTOMERS_PER_LOCK);
    return this.colocate ? this.interleaved(w, 1 + TPCC_DISTRICTS + r) : this.customerBase + w * TPCC_DISTRICTS * CUSTOMER_LOCKS_PER_DISTRICT + r;
  }

  stockLock(w: number, item: number): number {
    const r = Math.floor(item / TPCC_ITEMS_PER_LOCK);
    return this.colocate ? this.interleaved(w, 1 + TPCC_DISTRICTS * (1 + CUSTOMER_LOCKS_PER_DISTRICT) + r) : this.stockBase + w * STOCK_LOCKS_PER_WAREHOUSE + r;
  }

  /**
   * The home warehouse of a client on `node`: drawn among the warehouses co-located with it when
   * placement is co-located (see `colocate`), else among all. One draw either way.
   */
  homeOf(node: NodeId | undefined, random: Random): number {
    const at = node === undefined || !this.colocate ? -1 : this.colocate.indexOf(node);
    if (at < 0 || !this.colocate) return random.int(this.warehouses);
    const n = this.colocate.length;
    return at + n * random.int(Math.ceil((this.warehouses - at) / n));
  }

  private interleaved(w: number, r: number): number {
    return r * this.warehouses + w;
  }
}

/** Locks per warehouse (warehouse row, districts, customer ranges, stock ranges). */
export const TPCC_LOCKS_PER_WAREHOUSE = 1 + TPCC_DISTRICTS * (1 + CUSTOMER_LOCKS_PER_DISTRICT) + STOCK_LOCKS_PER_WAREHOUSE;

/** TPC-C's NURand(A, x, y) with run constant C = 0 (the constant only permutes hot ids). */
function nurand(random: Random, a: number, x: number, y: number): number {
  return ((uniformInt(random, 0, a) | uniformInt(random, x, y)) % (y - x + 1)) + x;
}

function otherWarehouse(layout: TpccLayout, home: number, random: Random): number {
  if (layout.warehouses === 1) return home;
  const w = random.int(layout.warehouses - 1);
  return w >= home ? w + 1 : w;
}

/** Draws a client's home warehouse; call once, first, on its stream. */
export function tpccHome(layout: TpccLayout, random: Random, node?: NodeId): number {
  return layout.homeOf(node, random);
}

/** Draws the next TPC-C transaction of a client with home warehouse `w`. */
export function nextTpccTxn(layout: TpccLayout, w: number, random: Random): TxnTemplate {
  const scans = layout.longReads;
  // Drawn only with long reads on, so plain TPC-C streams stay what they were.
  if (scans && scans.probability > 0 && random.next() < scans.probability) {
    return { ...txn(TPCC_SCAN, [{ lock: layout.customerTableLock(w)!, mode: 'exclusive' }]), executeNs: scans.scanNs, ...(scans.slots > 1 ? { slots: scans.slots } : {}) };
  }
  const type = pickByWeight(TPCC_MIX, random);
  const d = random.int(TPCC_DISTRICTS);
  const customer = () => nurand(random, 1023, 0, TPCC_CUSTOMERS_PER_DISTRICT - 1);
  const item = () => nurand(random, 8191, 0, TPCC_ITEMS - 1);
  const locks: TxnLockRequest[] = [];
  switch (type) {
    case 'NEW_ORDER': {
      locks.push({ lock: layout.districtLock(w, d), mode: 'exclusive' }, { lock: layout.customerLock(w, d, customer()), mode: 'shared' });
      const lines = Math.min(uniformInt(random, 5, 15), MAX_ORDER_LINES);
      for (let i = 0; i < lines; i++) {
        const supplier = random.int(100) === 0 ? otherWarehouse(layout, w, random) : w;
        locks.push({ lock: layout.stockLock(supplier, item()), mode: 'exclusive' });
      }
      break;
    }
    case 'PAYMENT': {
      const remote = random.int(100) < 15;
      const cw = remote ? otherWarehouse(layout, w, random) : w;
      const cd = remote ? random.int(TPCC_DISTRICTS) : d;
      locks.push(
        { lock: layout.warehouseLock(w), mode: 'exclusive' },
        { lock: layout.districtLock(w, d), mode: 'exclusive' },
        { lock: layout.customerLock(cw, cd, customer()), mode: 'exclusive' },
      );
      const table = layout.customerTableLock(cw);
      if (table !== undefined) locks.push({ lock: table, mode: 'shared' });
      break;
    }
    case 'ORDER_STATUS':
      locks.push({ lock: layout.districtLock(w, d), mode: 'shared' }, { lock: layout.customerLock(w, d, customer()), mode: 'shared' });
      break;
    case 'DELIVERY':
      locks.push({ lock: layout.districtLock(w, d), mode: 'exclusive' }, { lock: layout.customerLock(w, d, random.int(TPCC_CUSTOMERS_PER_DISTRICT)), mode: 'exclusive' });
      if (layout.customerTableLock(w) !== undefined) locks.push({ lock: layout.customerTableLock(w)!, mode: 'shared' });
      break;
    default: {
      // STOCK_LEVEL
      locks.push({ lock: layout.districtLock(w, d), mode: 'shared' });
      const lines = Math.min(uniformInt(random, 5, 15), MAX_TXN_LOCKS - 1);
      for (let i = 0; i < lines; i++) locks.push({ lock: layout.stockLock(w, item()), mode: 'shared' });
    }
  }
  return txn(type, locks);
}
