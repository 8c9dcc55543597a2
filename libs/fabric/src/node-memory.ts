import { FabricAccessError } from '@lockfabric/ports';
import type { AtomicWidth, Completion, NodeId, RemoteAddr, VerbStatus, WorkRequest } from '@lockfabric/ports';
import { maskedCasResult, maskedFaaResult, widthMask } from './atomic-ops.js';
import { KeyedMutex } from './keyed-mutex.js';
import { MAX_TRANSFER_BYTES } from './limits.js';
import { PagedBytes } from './paged-bytes.js';
import { deriveRkey } from './rkey.js';
import { U64_MAX, hex } from './u64.js';

/** A registered memory region as clients address it. */
export interface RegionInfo {
  readonly node: NodeId;
  readonly region: number;
  readonly rkey: number;
  readonly sizeBytes: number;
}

export interface RegisterOptions {
  /** Fixed rkey (unsigned 32-bit); by default one is derived from node and region. */
  readonly rkey?: number;
}

export interface NodeMemoryOptions {
  /** Mutant: allocate every region whole at registration, as before pages (footprint tests must catch it). */
  readonly mutantEagerRegions?: boolean;
}

interface Region {
  readonly info: RegionInfo;
  readonly store: PagedBytes;
}

/** A CPU access waiting in its gap; records the old value a remote RMW that wrote the word meanwhile saw. */
interface GapWatch {
  remoteRmwOld: bigint | undefined;
}

const fail = (status: VerbStatus, detail: string): Completion => ({ status, detail });

/**
 * The registered memory of one node and the verb semantics applied to it. `execute` is synchronous,
 * so each verb — including a 16-byte masked atomic or a long READ — is atomic with every other verb.
 * CPU read-modify-writes (`cpuRmw`) are the exception that ALock's Table 1 demands: they are not
 * atomic with remote RMWs. Counting and timing belong to `Nic` and `NicScheduler`.
 */
export class NodeMemory {
  readonly #regions: Region[] = [];
  /** CPU RMWs of one word are atomic with each other (cache coherence): one at a time per word. */
  readonly #cpuRmwTurns = new KeyedMutex<string>();
  /** Words with CPU accesses in their gap, keyed `region/byteOffset`; empty except in that window. */
  readonly #gaps = new Map<string, Set<GapWatch>>();
  /** Callbacks per watched word, keyed `region/byteOffset`: called after every store to the word. */
  readonly #watchers = new Map<string, Set<() => void>>();

  constructor(
    readonly node: NodeId,
    private readonly options: NodeMemoryOptions = {},
  ) {
    if (!Number.isSafeInteger(node) || node < 0) throw new RangeError(`node id must be a non-negative integer, got ${node}`);
  }

  /** Registers a zero-filled region of `sizeBytes` (rounded up to whole 8-byte words); its pages are allocated on first store. */
  register(sizeBytes: number, options: RegisterOptions = {}): RegionInfo {
    if (!Number.isSafeInteger(sizeBytes) || sizeBytes <= 0) {
      throw new RangeError(`region size must be a positive whole number of bytes, got ${sizeBytes}`);
    }
    const region = this.#regions.length;
    const rkey = options.rkey ?? deriveRkey(this.node, region);
    if (!Number.isInteger(rkey) || rkey < 0 || rkey > 0xffff_ffff) {
      throw new RangeError(`rkey must be an unsigned 32-bit integer, got ${rkey}`);
    }
    const store = new PagedBytes(Math.ceil(sizeBytes / 8) * 8, this.options.mutantEagerRegions === true);
    const info: RegionInfo = { node: this.node, region, rkey, sizeBytes };
    this.#regions.push({ info, store });
    return info;
  }

  regions(): RegionInfo[] {
    return this.#regions.map((r) => r.info);
  }

  region(region: number): RegionInfo | undefined {
    return this.#regions[region]?.info;
  }

  /** ArrayBuffer bytes held by `region`, or by every region: what this node's memory costs the process. */
  allocatedBytes(region?: number): number {
    if (region === undefined) return this.#regions.reduce((sum, r) => sum + r.store.allocatedBytes, 0);
    const r = this.#regions[region];
    if (!r) throw new FabricAccessError('unknown-region', this.#noRegion(region));
    return r.store.allocatedBytes;
  }

  /** Zero-fills a region, as after a restart of the memory node; ids and rkeys stay valid. */
  reset(region: number): void {
    const r = this.#regions[region];
    if (!r) throw new FabricAccessError('unknown-region', this.#noRegion(region));
    r.store.clear();
    for (const [key, watchers] of this.#watchers) if (key.startsWith(`${region}/`)) notifyAll(watchers);
  }

  /**
   * Calls `onStore` after every store to the aligned 8-byte word at `addr` — by a verb (WRITE,
   * successful CAS, FAA, masked atomics), a CPU store or RMW, or a region reset — until the
   * returned function is called. What lets a local spin wait for a change instead of polling.
   */
  watchWord(addr: RemoteAddr, onStore: () => void): () => void {
    const { region, at } = this.#cpuWord(addr, 'watch');
    const key = `${region.info.region}/${at}`;
    let watchers = this.#watchers.get(key);
    if (!watchers) {
      watchers = new Set();
      this.#watchers.set(key, watchers);
    }
    const set = watchers;
    const entry = () => onStore();
    set.add(entry);
    return () => {
      set.delete(entry);
      if (set.size === 0 && this.#watchers.get(key) === set) this.#watchers.delete(key);
    };
  }

  /** Tells the watchers of every word overlapping [at, at + length) that it was stored to. */
  #stored(region: Region, at: number, length: number): void {
    if (this.#watchers.size === 0) return;
    for (let word = at - (at % 8); word < at + length; word += 8) {
      const watchers = this.#watchers.get(`${region.info.region}/${word}`);
      if (watchers) notifyAll(watchers);
    }
  }

  /** Applies one work request atomically. Every failure is a status with a readable detail; it never throws. */
  execute(wr: WorkRequest, initiator: NodeId): Completion {
    const target = this.#target(wr, initiator);
    if (!('store' in target)) return target;
    const offset = wr.addr.offset;
    switch (wr.op) {
      case 'read': {
        const bad = checkLength('read', wr.length);
        if (bad) return bad;
        const at = this.#place(target, offset, wr.length, 1, 'read');
        if (typeof at !== 'number') return at;
        return { status: 'ok', data: target.store.read(at, wr.length) };
      }
      case 'write': {
        if (!(wr.data instanceof Uint8Array)) return fail('bad-request', 'write data must be a byte array');
        const bad = checkLength('write', wr.data.length);
        if (bad) return bad;
        const at = this.#place(target, offset, wr.data.length, 1, 'write');
        if (typeof at !== 'number') return at;
        target.store.write(at, wr.data);
        this.#stored(target, at, wr.data.length);
        return { status: 'ok' };
      }
      case 'cas': {
        const bad = checkValue('cas', 'compare', wr.compare, 8) ?? checkValue('cas', 'swap', wr.swap, 8);
        if (bad) return bad;
        const at = this.#place(target, offset, 8, 8, 'cas');
        if (typeof at !== 'number') return at;
        const old = target.store.getU64(at);
        if (old === wr.compare) {
          target.store.setU64(at, wr.swap);
          this.#noteRemoteRmw(target, at, 8, old);
          this.#stored(target, at, 8);
        }
        return { status: 'ok', value: old };
      }
      case 'faa': {
        const bad = checkValue('faa', 'add', wr.add, 8);
        if (bad) return bad;
        const at = this.#place(target, offset, 8, 8, 'faa');
        if (typeof at !== 'number') return at;
        const old = target.store.getU64(at);
        target.store.setU64(at, (old + wr.add) & U64_MAX);
        this.#noteRemoteRmw(target, at, 8, old);
        this.#stored(target, at, 8);
        return { status: 'ok', value: old };
      }
      case 'masked-cas': {
        const bad =
          checkWidth('masked-cas', wr.width) ??
          checkValue('masked-cas', 'compare', wr.compare, wr.width) ??
          checkValue('masked-cas', 'swap', wr.swap, wr.width) ??
          checkValue('masked-cas', 'compareMask', wr.compareMask, wr.width) ??
          checkValue('masked-cas', 'swapMask', wr.swapMask, wr.width);
        if (bad) return bad;
        const at = this.#place(target, offset, wr.width, wr.width, 'masked-cas');
        if (typeof at !== 'number') return at;
        const old = loadWide(target.store, at, wr.width);
        const next = maskedCasResult(old, wr.compare, wr.swap, wr.compareMask, wr.swapMask);
        if (next !== undefined) {
          storeWide(target.store, at, wr.width, next);
          this.#noteRemoteRmw(target, at, wr.width, old);
          this.#stored(target, at, wr.width);
        }
        return { status: 'ok', value: old };
      }
      case 'masked-faa': {
        const bad =
          checkWidth('masked-faa', wr.width) ??
          checkValue('masked-faa', 'add', wr.add, wr.width) ??
          checkValue('masked-faa', 'boundaryMask', wr.boundaryMask, wr.width);
        if (bad) return bad;
        const at = this.#place(target, offset, wr.width, wr.width, 'masked-faa');
        if (typeof at !== 'number') return at;
        const old = loadWide(target.store, at, wr.width);
        storeWide(target.store, at, wr.width, maskedFaaResult(old, wr.add, wr.boundaryMask, wr.width));
        this.#noteRemoteRmw(target, at, wr.width, old);
        this.#stored(target, at, wr.width);
        return { status: 'ok', value: old };
      }
      default: {
        const op: unknown = (wr as { op?: unknown }).op;
        return fail('bad-request', `unknown verb opcode ${JSON.stringify(op) ?? String(op)}`);
      }
    }
  }

  /** CPU load of an aligned 8-byte word by a process on this node. Bad addresses are programming errors: they throw. */
  cpuLoad(addr: RemoteAddr): bigint {
    const { region, at } = this.#cpuWord(addr, 'load');
    return region.store.getU64(at);
  }

  /** CPU store of an aligned 8-byte word by a process on this node. */
  cpuStore(addr: RemoteAddr, value: bigint): void {
    const bad = checkValue('store', 'value', value, 8);
    if (bad) throw new FabricAccessError(bad.status, bad.detail ?? 'bad value');
    const { region, at } = this.#cpuWord(addr, 'store');
    region.store.setU64(at, value);
    this.#stored(region, at, 8);
  }

  /**
   * CPU read-modify-write of an aligned word, with a scheduling point (`yieldPoint`) in the middle.
   * `update` maps the old value to the new one, or to `undefined` for "no store" (a failed CAS).
   *
   * On hardware a locked CPU RMW is atomic with CPU accesses and with single remote READs/WRITEs, but
   * an RNIC executes a remote RMW as a read and a later write, and a CPU RMW can land in between; the
   * NIC's write then erases the CPU's update (ALock Table 1). So: if a remote RMW writes this word
   * during the gap, the CPU RMW is placed inside it — it returns the value that RMW read and its own
   * store is lost; otherwise it takes effect atomically when the gap ends. CPU RMWs of one word are
   * serialized with each other. Resolves with the old value; bad addresses throw FabricAccessError.
   */
  async cpuRmw(addr: RemoteAddr, update: (old: bigint) => bigint | undefined, yieldPoint: () => Promise<void>): Promise<bigint> {
    const { region, at } = this.#cpuWord(addr, 'read-modify-write');
    const key = `${region.info.region}/${at}`;
    return this.#cpuRmwTurns.run(key, async () => {
      const watch = await this.#gap(key, yieldPoint);
      if (watch.remoteRmwOld !== undefined) return watch.remoteRmwOld;
      const old = region.store.getU64(at);
      const next = update(old);
      if (next !== undefined) {
        const bad = checkValue('CPU read-modify-write', 'result', next, 8);
        if (bad) throw new FabricAccessError(bad.status, bad.detail ?? 'bad value');
        region.store.setU64(at, next);
        this.#stored(region, at, 8);
      }
      return old;
    });
  }

  /**
   * CPU store with a scheduling point before it lands: a remote RMW that writes the word during the
   * gap erases the store (Table 1: a CPU write is not atomic with a remote RMW). Otherwise the store
   * lands when the gap ends.
   */
  async cpuStoreWithGap(addr: RemoteAddr, value: bigint, yieldPoint: () => Promise<void>): Promise<void> {
    const bad = checkValue('store', 'value', value, 8);
    if (bad) throw new FabricAccessError(bad.status, bad.detail ?? 'bad value');
    const { region, at } = this.#cpuWord(addr, 'store');
    const watch = await this.#gap(`${region.info.region}/${at}`, yieldPoint);
    if (watch.remoteRmwOld === undefined) {
      region.store.setU64(at, value);
      this.#stored(region, at, 8);
    }
  }

  async #gap(key: string, yieldPoint: () => Promise<void>): Promise<GapWatch> {
    const watch: GapWatch = { remoteRmwOld: undefined };
    let watches = this.#gaps.get(key);
    if (!watches) {
      watches = new Set();
      this.#gaps.set(key, watches);
    }
    watches.add(watch);
    try {
      await yieldPoint();
    } finally {
      watches.delete(watch);
      if (watches.size === 0) this.#gaps.delete(key);
    }
    return watch;
  }

  /** Tells CPU accesses in their gap that a remote RMW wrote `width` bytes at `at` after reading `old`. */
  #noteRemoteRmw(region: Region, at: number, width: AtomicWidth, old: bigint): void {
    if (this.#gaps.size === 0) return;
    for (let word = 0; word < width / 8; word++) {
      const watches = this.#gaps.get(`${region.info.region}/${at + word * 8}`);
      if (!watches) continue;
      const wordOld = (old >> BigInt(64 * word)) & U64_MAX;
      for (const watch of watches) watch.remoteRmwOld ??= wordOld;
    }
  }

  // CPU accesses skip the rkey: protection keys guard the NIC, not the node's own processes.
  #cpuWord(addr: RemoteAddr, what: string): { region: Region; at: number } {
    if (addr.node !== this.node) {
      throw new FabricAccessError('unknown-node', `CPU ${what} on node ${this.node} cannot reach memory of node ${addr.node}`);
    }
    const region = this.#regions[addr.region];
    if (!region) throw new FabricAccessError('unknown-region', this.#noRegion(addr.region));
    const at = this.#place(region, addr.offset, 8, 8, `CPU ${what}`);
    if (typeof at !== 'number') throw new FabricAccessError(at.status, at.detail ?? at.status);
    return { region, at };
  }

  #target(wr: WorkRequest, initiator: NodeId): Region | Completion {
    const addr = wr.addr;
    if (addr.node !== this.node) {
      return fail('unknown-node', `work request for node ${addr.node} reached the NIC of node ${this.node}`);
    }
    const region = Number.isInteger(addr.region) ? this.#regions[addr.region] : undefined;
    if (!region) return fail('unknown-region', this.#noRegion(addr.region));
    if (addr.rkey !== region.info.rkey) {
      return fail(
        'bad-rkey',
        `rkey ${formatRkey(addr.rkey)} from node ${initiator} does not match region ${addr.region} of node ${this.node}`,
      );
    }
    return region;
  }

  /** Validates offset, alignment and bounds; returns the byte offset or the failed completion. */
  #place(region: Region, offset: number, length: number, align: number, what: string): number | Completion {
    const size = region.info.sizeBytes;
    if (!Number.isSafeInteger(offset)) return fail('bad-request', `${what} offset must be a whole number, got ${offset}`);
    if (offset % align !== 0) {
      return fail('misaligned', `${what} at offset ${offset} of region ${region.info.region} is not ${align}-byte aligned`);
    }
    if (offset < 0 || offset + length > size) {
      return fail(
        'out-of-bounds',
        `${what} of ${length} bytes at offset ${offset} falls outside region ${region.info.region} of node ${this.node} (${size} bytes)`,
      );
    }
    return offset;
  }

  #noRegion(region: number): string {
    const count = this.#regions.length;
    const known = count === 0 ? 'no regions registered' : `regions 0..${count - 1}`;
    return `node ${this.node} has no region ${region} (${known})`;
  }
}

/** Calls each watcher once; a watcher may unsubscribe (itself or others) while this runs. */
function notifyAll(watchers: Set<() => void>): void {
  for (const watcher of [...watchers]) watcher();
}

function checkLength(what: string, length: number): Completion | undefined {
  if (!Number.isSafeInteger(length) || length <= 0) {
    return fail('bad-request', `${what} length must be a positive whole number of bytes, got ${length}`);
  }
  if (length > MAX_TRANSFER_BYTES) {
    return fail('bad-request', `${what} of ${length} bytes exceeds the ${MAX_TRANSFER_BYTES}-byte limit of one work request`);
  }
  return undefined;
}

function checkWidth(what: string, width: number): Completion | undefined {
  return width === 8 || width === 16 ? undefined : fail('bad-request', `${what} width must be 8 or 16 bytes, got ${width}`);
}

function checkValue(what: string, field: string, value: unknown, width: AtomicWidth): Completion | undefined {
  if (typeof value !== 'bigint') return fail('bad-request', `${what} ${field} must be a bigint, got ${typeof value}`);
  if (value < 0n || value > widthMask(width)) {
    return fail('bad-request', `${what} ${field} ${hex(value)} is not an unsigned ${width * 8}-bit value`);
  }
  return undefined;
}

function loadWide(store: PagedBytes, at: number, width: AtomicWidth): bigint {
  const low = store.getU64(at);
  return width === 8 ? low : low | (store.getU64(at + 8) << 64n);
}

function storeWide(store: PagedBytes, at: number, width: AtomicWidth, value: bigint): void {
  store.setU64(at, value & U64_MAX);
  if (width === 16) store.setU64(at + 8, value >> 64n);
}

function formatRkey(rkey: unknown): string {
  return typeof rkey === 'number' && Number.isInteger(rkey) && rkey >= 0 ? `0x${rkey.toString(16)}` : String(rkey);
}
