import { FabricAccessError } from '@lockfabric/ports';
import type { LockId, RemoteAddr, Verbs } from '@lockfabric/ports';
import type { TraceWords } from './handover-trace.js';
import { traceBytes } from './handover-trace.js';
import { LOCAL, REMOTE } from './layout.js';
import type { AccessClass } from './layout.js';

/** Verbs issued on behalf of one operation (the acquire span's `verbs` attribute). */
export interface VerbTally {
  verbs: number;
}

/**
 * The three abstract operations of spec §3.2 in one access class, plus the peer-descriptor writes.
 * LOCAL runs on the CPU only (`verbs.cpu`) and never touches the NIC; REMOTE uses verbs and waits
 * for each completion before the next step (O1).
 */
export interface ClassAccess {
  readonly cls: AccessClass;
  load(addr: RemoteAddr): Promise<bigint>;
  store(addr: RemoteAddr, value: bigint): Promise<void>;
  cas(addr: RemoteAddr, compare: bigint, swap: bigint): Promise<bigint>;
  /** `count` consecutive words from `addr` in one access (a single READ for REMOTE). */
  loadWords(addr: RemoteAddr, count: number): Promise<bigint[]>;
  /** A word of a peer's descriptor: next (link) or budget (hand-off). */
  storePeer(addr: RemoteAddr, value: bigint): Promise<void>;
  /** Trace area then budget word of a peer's descriptor, in that order (one doorbell for REMOTE). */
  storePeerWithTrace(traceAddr: RemoteAddr, words: TraceWords, addr: RemoteAddr, value: bigint): Promise<void>;
}

export function classAccess(cls: AccessClass, verbs: Verbs, lock: LockId, tally: VerbTally, sameNodeStores: boolean): ClassAccess {
  return cls === LOCAL ? localAccess(verbs) : remoteAccess(verbs, lock, tally, sameNodeStores);
}

function localAccess(verbs: Verbs): ClassAccess {
  const cpu = verbs.cpu;
  return {
    cls: LOCAL,
    load: (addr) => cpu.load(addr),
    store: (addr, value) => cpu.store(addr, value),
    cas: (addr, compare, swap) => cpu.cas(addr, compare, swap),
    loadWords: async (addr, count) => {
      const words: bigint[] = [];
      for (let i = 0; i < count; i++) words.push(await cpu.load({ ...addr, offset: addr.offset + 8 * i }));
      return words;
    },
    storePeer: (addr, value) => cpu.store(addr, value),
    storePeerWithTrace: async (traceAddr, words, addr, value) => {
      for (let i = 0; i < words.length; i++) await cpu.store({ ...traceAddr, offset: traceAddr.offset + 8 * i }, words[i] as bigint);
      await cpu.store(addr, value);
    },
  };
}

function remoteAccess(verbs: Verbs, lock: LockId, tally: VerbTally, sameNodeStores: boolean): ClassAccess {
  const options = { lock };
  const write = async (addr: RemoteAddr, value: bigint) => {
    tally.verbs++;
    await verbs.write(addr, wordBytes(value), options);
  };
  const loadWords = async (addr: RemoteAddr, count: number) => {
    tally.verbs++;
    const bytes = await verbs.read(addr, 8 * count, options);
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    return Array.from({ length: count }, (_, i) => view.getBigUint64(8 * i, true));
  };
  const viaCpu = (addr: RemoteAddr) => sameNodeStores && verbs.isLocal(addr);
  return {
    cls: REMOTE,
    load: async (addr) => (await loadWords(addr, 1))[0] as bigint,
    store: write,
    cas: (addr, compare, swap) => {
      tally.verbs++;
      return verbs.cas(addr, compare, swap, options);
    },
    loadWords,
    storePeer: (addr, value) => (viaCpu(addr) ? verbs.cpu.store(addr, value) : write(addr, value)),
    storePeerWithTrace: async (traceAddr, words, addr, value) => {
      if (viaCpu(addr)) {
        for (let i = 0; i < words.length; i++) await verbs.cpu.store({ ...traceAddr, offset: traceAddr.offset + 8 * i }, words[i] as bigint);
        await verbs.cpu.store(addr, value);
        return;
      }
      tally.verbs += 2;
      const completions = await verbs.post([
        { op: 'write', addr: traceAddr, data: traceBytes(words), lock },
        { op: 'write', addr, data: wordBytes(value), lock },
      ]);
      // The trace write is best effort; the budget write is the hand-over and must have landed.
      const handover = completions[1];
      if (!handover) throw new FabricAccessError('unreachable', `hand-over write to node ${addr.node} returned no completion`);
      if (handover.status !== 'ok') throw new FabricAccessError(handover.status, handover.detail ?? `hand-over write to node ${addr.node} failed`);
    },
  };
}

export function wordBytes(value: bigint): Uint8Array {
  const bytes = new Uint8Array(8);
  new DataView(bytes.buffer).setBigUint64(0, value, true);
  return bytes;
}
