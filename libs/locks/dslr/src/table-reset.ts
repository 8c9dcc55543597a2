/**
 * The coordinator's whole-table reset between runs (spec §7.6 a): with every client stopped, check
 * conservation (I4), WRITE 0 over every lock word, and verify. WRITE touches lock words only here,
 * because nobody is issuing atomics (§2): the caller owns the barrier.
 */
import type { LockId, LockTableLayout, RemoteAddr, Verbs } from '@lockfabric/ports';
import { WordLayout, drained, formatCounters } from './lock-word.js';
import type { Counters, LayoutName } from './lock-word.js';

export interface TableResetOptions {
  /** `update` for the six-field word of update locks; default `standard`. */
  readonly layout?: LayoutName;
  /** Bytes per READ or WRITE (default 64 KiB, below any fabric's transfer limit). */
  readonly chunkBytes?: number;
}

/** A word that was neither drained nor zero before the reset: a ticket was lost, skipped or is still out. */
export interface ConservationViolation {
  readonly lock: LockId;
  readonly word: bigint;
  /** `{nX,nS,maxX,maxS}` (or the six-field form). */
  readonly counters: string;
}

export interface TableResetReport {
  readonly locks: number;
  /** Words that were not zero before the reset (drained or not). */
  readonly nonZeroBefore: number;
  /**
   * I4 at quiescence: words with outstanding tickets. Expected after crashes and skips (tickets of
   * dead holders stay counted); in a run without them, each one is a protocol bug worth reporting.
   */
  readonly conservationViolations: readonly ConservationViolation[];
  /** Locks still not zero when read back after the WRITE (someone issued atomics: the barrier leaked). */
  readonly notZeroAfter: readonly LockId[];
}

/** A contiguous range of one memory node's table: `count` words from lock slot `firstSlot`. */
interface Chunk {
  readonly addr: RemoteAddr;
  readonly locks: readonly LockId[];
}

function chunksOf(table: LockTableLayout, chunkBytes: number): Chunk[] {
  const nodes = table.memoryNodes.length;
  if (nodes === 0) throw new RangeError('lock table has no memory nodes');
  const perChunk = Math.max(1, Math.floor(chunkBytes / table.entryBytes));
  const chunks: Chunk[] = [];
  table.memoryNodes.forEach((home, index) => {
    // Lock ids are striped: node `index` holds index, index + nodes, … in consecutive slots.
    const ids: LockId[] = [];
    for (let lock = index; lock < table.lockCount; lock += nodes) ids.push(lock);
    for (let from = 0; from < ids.length; from += perChunk) {
      const locks = ids.slice(from, from + perChunk);
      chunks.push({ addr: { node: home.node, region: home.region, rkey: home.rkey, offset: home.baseOffset + from * table.entryBytes }, locks });
    }
  });
  return chunks;
}

async function readChunk(verbs: Verbs, table: LockTableLayout, chunk: Chunk): Promise<bigint[]> {
  const bytes = await verbs.read(chunk.addr, chunk.locks.length * table.entryBytes);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return chunk.locks.map((_, i) => view.getBigUint64(i * table.entryBytes, true));
}

/**
 * Resets every DSLR lock word of `table` to 0 and reports what the words held before. Call it only
 * behind a barrier (no client holds, waits or acquires); `notZeroAfter` non-empty means the barrier
 * leaked. Throws FabricAccessError when a memory node cannot be reached.
 */
export async function resetDslrTable(verbs: Verbs, table: LockTableLayout, options: TableResetOptions = {}): Promise<TableResetReport> {
  if (table.entryBytes < 8) throw new RangeError(`a DSLR lock word needs 8-byte entries, the table has ${table.entryBytes}`);
  const layout = WordLayout.of(options.layout ?? 'standard');
  const chunks = chunksOf(table, options.chunkBytes ?? 64 * 1024);
  let nonZeroBefore = 0;
  const conservationViolations: ConservationViolation[] = [];
  for (const chunk of chunks) {
    const words = await readChunk(verbs, table, chunk);
    words.forEach((word, i) => {
      if (word === 0n) return;
      nonZeroBefore++;
      const c: Counters = layout.decode(word);
      if (!drained(c)) conservationViolations.push({ lock: chunk.locks[i] as LockId, word, counters: formatCounters(c, layout) });
    });
  }
  for (const chunk of chunks) await verbs.write(chunk.addr, new Uint8Array(chunk.locks.length * table.entryBytes));
  const notZeroAfter: LockId[] = [];
  for (const chunk of chunks) {
    const words = await readChunk(verbs, table, chunk);
    words.forEach((word, i) => {
      if (word !== 0n) notZeroAfter.push(chunk.locks[i] as LockId);
    });
  }
  return { locks: table.lockCount, nonZeroBefore, conservationViolations, notZeroAfter };
}
