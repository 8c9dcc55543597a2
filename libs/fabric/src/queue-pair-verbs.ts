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

  // The one-verb helpers chain on the post's promise instead of awaiting inside async functions
  // (one promise and one microtask hop per verb fewer), and build each request as one literal
  // rather than by spreading: on `sim` this path is a large share of a simulated verb's cost.
  read(addr: RemoteAddr, length: number, options: VerbOptions = {}): Promise<Uint8Array> {
    return this.#one(options.lock === undefined ? { op: 'read', addr, length } : { op: 'read', addr, length, lock: options.lock }, options).then((completion) => {
      if (!completion.data) throw new FabricAccessError('bad-request', `read of ${length} bytes completed without data`);
      return completion.data;
    });
  }

  write(addr: RemoteAddr, data: Uint8Array, options: VerbOptions = {}): Promise<void> {
    return this.#one(options.lock === undefined ? { op: 'write', addr, data } : { op: 'write', addr, data, lock: options.lock }, options).then(NOTHING);
  }

  cas(addr: RemoteAddr, compare: bigint, swap: bigint, options: VerbOptions = {}): Promise<bigint> {
    return this.#one(options.lock === undefined ? { op: 'cas', addr, compare, swap } : { op: 'cas', addr, compare, swap, lock: options.lock }, options).then(VALUE_OF['cas']);
  }

  faa(addr: RemoteAddr, add: bigint, options: VerbOptions = {}): Promise<bigint> {
    return this.#one(options.lock === undefined ? { op: 'faa', addr, add } : { op: 'faa', addr, add, lock: options.lock }, options).then(VALUE_OF['faa']);
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
    return this.#one(wr, options).then(VALUE_OF['masked-cas']);
  }

  maskedFaa(
    addr: RemoteAddr,
    width: AtomicWidth,
    add: bigint,
    boundaryMask: bigint,
    options: VerbOptions = {},
  ): Promise<bigint> {
    const wr: WorkRequest = { op: 'masked-faa', addr, width, add, boundaryMask, ...lockOf(options) };
    return this.#one(wr, options).then(VALUE_OF['masked-faa']);
  }

  isLocal(addr: RemoteAddr): boolean {
    return addr.node === this.localNode && this.#local !== undefined;
  }

  /** Posts `wr` alone; resolves with its completion, rejects with a FabricAccessError unless it is ok. */
  #one(wr: WorkRequest, options: VerbOptions): Promise<Completion> {
    const postOptions: PostOptions = options.trace ? { trace: options.trace } : NO_POST_OPTIONS;
    let posted: Promise<Completion[]>;
    try {
      posted = this.#post([wr], postOptions);
    } catch (error) {
      // As from an async function: a post that throws fails the verb's promise, not the caller.
      return Promise.reject(error);
    }
    return posted.then(([completion]) => {
      if (!completion) {
        throw new FabricAccessError('unreachable', `${wr.op} to node ${wr.addr.node} returned no completion`);
      }
      if (completion.status !== 'ok') {
        throw new FabricAccessError(completion.status, completion.detail ?? `${wr.op} to node ${wr.addr.node} failed`);
      }
      return completion;
    });
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

const NOTHING = (): void => undefined;
const NO_POST_OPTIONS: PostOptions = Object.freeze({});
/** One reaction per atomic opcode, made once rather than per verb. */
const VALUE_OF = {
  cas: (c: Completion) => valueOf(c, 'cas'),
  faa: (c: Completion) => valueOf(c, 'faa'),
  'masked-cas': (c: Completion) => valueOf(c, 'masked-cas'),
  'masked-faa': (c: Completion) => valueOf(c, 'masked-faa'),
} as const;
