import type { StopSignal } from './stop-signal.js';
import type { LockId, NodeId } from './ids.js';
import type { SpanContextRef } from './trace.js';

/** Where a verb lands: a byte offset inside a registered region of a node, guarded by the region's rkey. */
export interface RemoteAddr {
  readonly node: NodeId;
  readonly region: number;
  readonly rkey: number;
  readonly offset: number;
}

export type VerbOpcode = 'read' | 'write' | 'cas' | 'faa' | 'masked-cas' | 'masked-faa';

/** Width in bytes of an extended (masked) atomic. 16-byte values are unsigned 128-bit bigints, little-endian. */
export type AtomicWidth = 8 | 16;

interface WorkRequestBase {
  readonly addr: RemoteAddr;
  /** The lock this verb works on, for per-lock NIC counters; not interpreted otherwise. */
  readonly lock?: LockId;
}

export type WorkRequest =
  | (WorkRequestBase & { readonly op: 'read'; readonly length: number })
  | (WorkRequestBase & { readonly op: 'write'; readonly data: Uint8Array })
  | (WorkRequestBase & { readonly op: 'cas'; readonly compare: bigint; readonly swap: bigint })
  | (WorkRequestBase & { readonly op: 'faa'; readonly add: bigint })
  | (WorkRequestBase & {
      readonly op: 'masked-cas';
      readonly width: AtomicWidth;
      readonly compare: bigint;
      readonly swap: bigint;
      /** Bits that take part in the comparison. */
      readonly compareMask: bigint;
      /** Bits that the swap writes when the comparison succeeds. */
      readonly swapMask: bigint;
    })
  | (WorkRequestBase & {
      readonly op: 'masked-faa';
      readonly width: AtomicWidth;
      readonly add: bigint;
      /** A set bit marks the most significant bit of a field: the carry out of it is dropped. */
      readonly boundaryMask: bigint;
    });

/** Completion status. Every failure of a verb is a status, never an exception inside the NIC. */
export type VerbStatus =
  | 'ok'
  | 'misaligned'
  | 'out-of-bounds'
  | 'bad-rkey'
  | 'unknown-region'
  | 'unknown-node'
  | 'unsupported'
  | 'bad-request'
  | 'unreachable';

export interface Completion {
  readonly status: VerbStatus;
  /** Old value of the target for atomics (128-bit for 16-byte masked atomics). */
  readonly value?: bigint;
  /** Bytes read, for READ. */
  readonly data?: Uint8Array;
  /** Human-readable cause when status is not `ok`. */
  readonly detail?: string;
}

/** NIC features a protocol may require; a substrate refuses to run a protocol whose needs it lacks. */
export type NicCapability = 'masked-atomics' | 'send' | 'local-cpu-access';

export interface PostOptions {
  /** Trace context of the operation that issues the verbs, carried to the memory node. */
  readonly trace?: SpanContextRef;
  /**
   * Memory-node incarnations the posting client is bound to (see {@link TableBinding}). A substrate
   * that tracks incarnations refuses the whole post when a node named here now serves another one.
   */
  readonly incarnations?: ReadonlyMap<NodeId, number>;
}

/**
 * One client's queue pair onto the fabric. Work requests of one `post` form one doorbell batch;
 * completions come back in order. Convenience methods throw {@link FabricAccessError} on a bad status.
 */
export interface Verbs {
  post(batch: readonly WorkRequest[], options?: PostOptions): Promise<Completion[]>;
  read(addr: RemoteAddr, length: number, options?: VerbOptions): Promise<Uint8Array>;
  write(addr: RemoteAddr, data: Uint8Array, options?: VerbOptions): Promise<void>;
  cas(addr: RemoteAddr, compare: bigint, swap: bigint, options?: VerbOptions): Promise<bigint>;
  faa(addr: RemoteAddr, add: bigint, options?: VerbOptions): Promise<bigint>;
  maskedCas(
    addr: RemoteAddr,
    width: AtomicWidth,
    compare: bigint,
    swap: bigint,
    compareMask: bigint,
    swapMask: bigint,
    options?: VerbOptions,
  ): Promise<bigint>;
  maskedFaa(addr: RemoteAddr, width: AtomicWidth, add: bigint, boundaryMask: bigint, options?: VerbOptions): Promise<bigint>;
  /** True when `addr` is memory of this client's own node, where CPU operations apply. */
  isLocal(addr: RemoteAddr): boolean;
  /** CPU access to this node's own memory (ALock's local cohort). Throws for non-local addresses. */
  readonly cpu: LocalMemory;
}

export interface VerbOptions extends PostOptions {
  readonly lock?: LockId;
}

/**
 * CPU loads, stores and read-modify-writes on a node's own registered memory. Aligned 8-byte loads
 * and stores are atomic; `cas` and `faa` are atomic with other CPU RMWs of the node but NOT with
 * remote RMWs on the same word: the emulator runs them as load, scheduling point, store.
 */
export interface LocalMemory {
  load(addr: RemoteAddr): Promise<bigint>;
  store(addr: RemoteAddr, value: bigint): Promise<void>;
  cas(addr: RemoteAddr, compare: bigint, swap: bigint): Promise<bigint>;
  faa(addr: RemoteAddr, add: bigint): Promise<bigint>;
  /**
   * Waits while the word at `addr` holds `value`: resolves with the word once a store (a verb or a
   * CPU access) changes it, or with what it holds when `signal` aborts. A local spin costs the
   * substrate one wake-up per change of the word instead of one step per poll. It is no memory
   * access of its own: callers load the word again, exactly as after a poll.
   */
  waitWhile(addr: RemoteAddr, value: bigint, signal?: StopSignal): Promise<bigint>;
}

/** Where the lock words of a protocol live: one contiguous table per memory node, lock ids striped across them. */
export interface LockTableLayout {
  readonly memoryNodes: readonly { readonly node: NodeId; readonly region: number; readonly rkey: number; readonly baseOffset: number }[];
  readonly entryBytes: number;
  readonly lockCount: number;
}

export function lockAddress(layout: LockTableLayout, lock: LockId): RemoteAddr {
  const nodes = layout.memoryNodes;
  const home = nodes[lock % nodes.length];
  if (!home) throw new RangeError('lock table has no memory nodes');
  const slot = Math.floor(lock / nodes.length);
  return { node: home.node, region: home.region, rkey: home.rkey, offset: home.baseOffset + slot * layout.entryBytes };
}

export function lockTableBytesPerNode(layout: LockTableLayout): number {
  return Math.ceil(layout.lockCount / Math.max(1, layout.memoryNodes.length)) * layout.entryBytes;
}
