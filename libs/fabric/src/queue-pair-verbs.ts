import { FabricAccessError } from '@lockfabric/ports';
import type {
  AtomicWidth,
  Completion,
  LocalMemory,
  NodeId,
  PostOptions,
  RemoteAddr,
  VerbOptions,
  Verbs,
  WorkRequest,
} from '@lockfabric/ports';

/** Rings one doorbell with `batch` and resolves with its completions, in order. Supplied by the substrate. */
export type PostBatch = (batch: readonly WorkRequest[], options: PostOptions) => Promise<Completion[]>;

export interface QueuePairVerbsOptions {
  readonly post: PostBatch;
  /** The node the client runs on. */
  readonly localNode: NodeId;
  /** CPU access to `localNode`'s registered memory, when the substrate offers it. */
  readonly local?: LocalMemory;
}

/**
 * The `Verbs` port over a substrate's `post`: the same class serves sim, embedded and live, so
 * convenience methods, error mapping and the local/remote split cannot drift between substrates.
 */
export class QueuePairVerbs implements Verbs {
  readonly localNode: NodeId;
  readonly cpu: LocalMemory;
  readonly #post: PostBatch;
  readonly #local: LocalMemory | undefined;

  constructor(options: QueuePairVerbsOptions) {
    this.#post = options.post;
    this.localNode = options.localNode;
    this.#local = options.local;
    this.cpu = this.#guardedCpu();
  }

  post(batch: readonly WorkRequest[], options: PostOptions = {}): Promise<Completion[]> {
    return this.#post(batch, options);
  }

  async read(addr: RemoteAddr, length: number, options: VerbOptions = {}): Promise<Uint8Array> {
    const completion = await this.#one({ op: 'read', addr, length, ...lockOf(options) }, options);
    if (!completion.data) throw new FabricAccessError('bad-request', `read of ${length} bytes completed without data`);
    return completion.data;
  }

  async write(addr: RemoteAddr, data: Uint8Array, options: VerbOptions = {}): Promise<void> {
    await this.#one({ op: 'write', addr, data, ...lockOf(options) }, options);
  }

  async cas(addr: RemoteAddr, compare: bigint, swap: bigint, options: VerbOptions = {}): Promise<bigint> {
    return valueOf(await this.#one({ op: 'cas', addr, compare, swap, ...lockOf(options) }, options), 'cas');
  }

  async faa(addr: RemoteAddr, add: bigint, options: VerbOptions = {}): Promise<bigint> {
    return valueOf(await this.#one({ op: 'faa', addr, add, ...lockOf(options) }, options), 'faa');
  }

  async maskedCas(
    addr: RemoteAddr,
    width: AtomicWidth,
    compare: bigint,
    swap: bigint,
    compareMask: bigint,
    swapMask: bigint,
    options: VerbOptions = {},
  ): Promise<bigint> {
    const wr: WorkRequest = { op: 'masked-cas', addr, width, compare, swap, compareMask, swapMask, ...lockOf(options) };
    return valueOf(await this.#one(wr, options), 'masked-cas');
  }

  async maskedFaa(
    addr: RemoteAddr,
    width: AtomicWidth,
    add: bigint,
    boundaryMask: bigint,
    options: VerbOptions = {},
  ): Promise<bigint> {
    const wr: WorkRequest = { op: 'masked-faa', addr, width, add, boundaryMask, ...lockOf(options) };
    return valueOf(await this.#one(wr, options), 'masked-faa');
  }

  isLocal(addr: RemoteAddr): boolean {
    return addr.node === this.localNode && this.#local !== undefined;
  }

  async #one(wr: WorkRequest, options: VerbOptions): Promise<Completion> {
    const postOptions: PostOptions = options.trace ? { trace: options.trace } : {};
    const [completion] = await this.#post([wr], postOptions);
    if (!completion) {
      throw new FabricAccessError('unreachable', `${wr.op} to node ${wr.addr.node} returned no completion`);
    }
    if (completion.status !== 'ok') {
      throw new FabricAccessError(completion.status, completion.detail ?? `${wr.op} to node ${wr.addr.node} failed`);
    }
    return completion;
  }

  #guardedCpu(): LocalMemory {
    const check = (addr: RemoteAddr): LocalMemory => {
      if (!this.#local) {
        throw new FabricAccessError('unsupported', `node ${this.localNode} has no CPU access to registered memory here`);
      }
      if (addr.node !== this.localNode) {
        throw new FabricAccessError(
          'unknown-node',
          `CPU access from node ${this.localNode} cannot reach memory of node ${addr.node}; use verbs`,
        );
      }
      return this.#local;
    };
    return {
      load: async (addr) => check(addr).load(addr),
      store: async (addr, value) => check(addr).store(addr, value),
      cas: async (addr, compare, swap) => check(addr).cas(addr, compare, swap),
      faa: async (addr, add) => check(addr).faa(addr, add),
      waitWhile: async (addr, value, signal) => check(addr).waitWhile(addr, value, signal),
    };
  }
}

function lockOf(options: VerbOptions): { lock?: number } {
  return options.lock === undefined ? {} : { lock: options.lock };
}

function valueOf(completion: Completion, op: string): bigint {
  if (completion.value === undefined) throw new FabricAccessError('bad-request', `${op} completed without its old value`);
  return completion.value;
}
