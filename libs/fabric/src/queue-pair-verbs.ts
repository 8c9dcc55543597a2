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

/**
 * Reads one verb's completion into what the caller gets, or throws the verb's FabricAccessError.
 * QueuePairVerbs owns these (so error mapping cannot drift between substrates); a substrate with
 * a {@link PostOne} runs one in the event that completes the verb.
 */
export type CompletionReader<T> = (completion: Completion, wr: WorkRequest) => T;

/**
 * Optional fast path for a lone verb: posts `wr` and settles with `read(completion, wr)` (or its
 * error) when the verb completes. The same result as `post([wr])` then `read`, with one promise
 * and one microtask hop per verb instead of three; `sim` supplies it, where that is most of the
 * cost of a simulated verb.
 */
export type PostOne = <T>(wr: WorkRequest, options: PostOptions, read: CompletionReader<T>) => Promise<T>;

export interface QueuePairVerbsOptions {
  readonly post: PostBatch;
  readonly postOne?: PostOne;
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
  readonly #postOne: PostOne;
  readonly #local: LocalMemory | undefined;

  constructor(options: QueuePairVerbsOptions) {
    this.#post = options.post;
    this.#postOne = options.postOne ?? this.#postThenRead;
    this.localNode = options.localNode;
    this.#local = options.local;
    this.cpu = this.#guardedCpu();
  }

  post(batch: readonly WorkRequest[], options: PostOptions = {}): Promise<Completion[]> {
    return this.#post(batch, options);
  }

  // The one-verb helpers build each request as one literal rather than by spreading, and read the
  // completion with one reader made once per opcode: on `sim` this path is a large share of a
  // simulated verb's cost.
  read(addr: RemoteAddr, length: number, options: VerbOptions = {}): Promise<Uint8Array> {
    return this.#one(options.lock === undefined ? { op: 'read', addr, length } : { op: 'read', addr, length, lock: options.lock }, options, READ_DATA);
  }

  write(addr: RemoteAddr, data: Uint8Array, options: VerbOptions = {}): Promise<void> {
    return this.#one(options.lock === undefined ? { op: 'write', addr, data } : { op: 'write', addr, data, lock: options.lock }, options, READ_NOTHING);
  }

  cas(addr: RemoteAddr, compare: bigint, swap: bigint, options: VerbOptions = {}): Promise<bigint> {
    return this.#one(options.lock === undefined ? { op: 'cas', addr, compare, swap } : { op: 'cas', addr, compare, swap, lock: options.lock }, options, READ_VALUE);
  }

  faa(addr: RemoteAddr, add: bigint, options: VerbOptions = {}): Promise<bigint> {
    return this.#one(options.lock === undefined ? { op: 'faa', addr, add } : { op: 'faa', addr, add, lock: options.lock }, options, READ_VALUE);
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
    return this.#one(wr, options, READ_VALUE);
  }

  maskedFaa(
    addr: RemoteAddr,
    width: AtomicWidth,
    add: bigint,
    boundaryMask: bigint,
    options: VerbOptions = {},
  ): Promise<bigint> {
    const wr: WorkRequest = { op: 'masked-faa', addr, width, add, boundaryMask, ...lockOf(options) };
    return this.#one(wr, options, READ_VALUE);
  }

  isLocal(addr: RemoteAddr): boolean {
    return addr.node === this.localNode && this.#local !== undefined;
  }

  /** Posts `wr` alone; resolves with `read` of its completion, rejects with a FabricAccessError unless it is ok. */
  #one<T>(wr: WorkRequest, options: VerbOptions, read: CompletionReader<T>): Promise<T> {
    const postOptions: PostOptions = options.trace ? { trace: options.trace } : NO_POST_OPTIONS;
    try {
      return this.#postOne(wr, postOptions, read);
    } catch (error) {
      // As from an async function: a post that throws fails the verb's promise, not the caller.
      return Promise.reject(error);
    }
  }

  /** The general path: a batch of one through `post`, read when its completion arrives. */
  readonly #postThenRead: PostOne = (wr, options, read) => this.#post([wr], options).then((completions) => read(completions[0] as Completion, wr));

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

/** Every verb's completion must be there and ok; otherwise the verb fails with its status. */
function checked(completion: Completion | undefined, wr: WorkRequest): Completion {
  if (!completion) throw new FabricAccessError('unreachable', `${wr.op} to node ${wr.addr.node} returned no completion`);
  if (completion.status !== 'ok') throw new FabricAccessError(completion.status, completion.detail ?? `${wr.op} to node ${wr.addr.node} failed`);
  return completion;
}

/** Readers made once, not per verb. */
const READ_NOTHING: CompletionReader<void> = (completion, wr) => void checked(completion, wr);
const READ_VALUE: CompletionReader<bigint> = (completion, wr) => {
  const value = checked(completion, wr).value;
  if (value === undefined) throw new FabricAccessError('bad-request', `${wr.op} completed without its old value`);
  return value;
};
const READ_DATA: CompletionReader<Uint8Array> = (completion, wr) => {
  const data = checked(completion, wr).data;
  if (!data) throw new FabricAccessError('bad-request', `read of ${wr.op === 'read' ? wr.length : 0} bytes completed without data`);
  return data;
};
const NO_POST_OPTIONS: PostOptions = Object.freeze({});
