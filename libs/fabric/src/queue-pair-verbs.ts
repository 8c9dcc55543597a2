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

  // The one-verb helpers chain one reaction on the post's promise instead of awaiting inside async
  // functions (two promises and microtask hops per verb fewer), and build each request as one
  // literal rather than by spreading: on `sim` this path is a large share of a simulated verb's cost.
  read(addr: RemoteAddr, length: number, options: VerbOptions = {}): Promise<Uint8Array> {
    const wr: WorkRequest = options.lock === undefined ? { op: 'read', addr, length } : { op: 'read', addr, length, lock: options.lock };
    return this.#postOne(wr, options).then((completions) => {
      const completion = okCompletion(completions, wr);
      if (!completion.data) throw new FabricAccessError('bad-request', `read of ${length} bytes completed without data`);
      return completion.data;
    });
  }

  write(addr: RemoteAddr, data: Uint8Array, options: VerbOptions = {}): Promise<void> {
    const wr: WorkRequest = options.lock === undefined ? { op: 'write', addr, data } : { op: 'write', addr, data, lock: options.lock };
    return this.#postOne(wr, options).then((completions) => void okCompletion(completions, wr));
  }

  cas(addr: RemoteAddr, compare: bigint, swap: bigint, options: VerbOptions = {}): Promise<bigint> {
    return this.#value(options.lock === undefined ? { op: 'cas', addr, compare, swap } : { op: 'cas', addr, compare, swap, lock: options.lock }, options);
  }

  faa(addr: RemoteAddr, add: bigint, options: VerbOptions = {}): Promise<bigint> {
    return this.#value(options.lock === undefined ? { op: 'faa', addr, add } : { op: 'faa', addr, add, lock: options.lock }, options);
  }

  maskedCas(
    addr: RemoteAddr,
    width: AtomicWidth,
    compare: bigint,
    swap: bigint,
    compareMask: bigint,
    swapMask: bigint,
    options: VerbOptions = {},
  ): Promise<bigint> {
    const wr: WorkRequest = { op: 'masked-cas', addr, width, compare, swap, compareMask, swapMask, ...lockOf(options) };
    return this.#value(wr, options);
  }

  maskedFaa(
    addr: RemoteAddr,
    width: AtomicWidth,
    add: bigint,
    boundaryMask: bigint,
    options: VerbOptions = {},
  ): Promise<bigint> {
    const wr: WorkRequest = { op: 'masked-faa', addr, width, add, boundaryMask, ...lockOf(options) };
    return this.#value(wr, options);
  }

  isLocal(addr: RemoteAddr): boolean {
    return addr.node === this.localNode && this.#local !== undefined;
  }

  /** An atomic: resolves with the old value, in one reaction (the hot path of every spin). */
  #value(wr: WorkRequest, options: VerbOptions): Promise<bigint> {
    return this.#postOne(wr, options).then((completions) => valueOf(okCompletion(completions, wr), wr.op));
  }

  #postOne(wr: WorkRequest, options: VerbOptions): Promise<Completion[]> {
    const postOptions: PostOptions = options.trace ? { trace: options.trace } : NO_POST_OPTIONS;
    try {
      return this.#post([wr], postOptions);
    } catch (error) {
      // As from an async function: a post that throws fails the verb's promise, not the caller.
      return Promise.reject(error);
    }
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

function okCompletion(completions: readonly Completion[], wr: WorkRequest): Completion {
  const completion = completions[0];
  if (!completion) throw new FabricAccessError('unreachable', `${wr.op} to node ${wr.addr.node} returned no completion`);
  if (completion.status !== 'ok') throw new FabricAccessError(completion.status, completion.detail ?? `${wr.op} to node ${wr.addr.node} failed`);
  return completion;
}

const NO_POST_OPTIONS: PostOptions = Object.freeze({});
