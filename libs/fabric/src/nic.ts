import type { Completion, NicCapability, NodeId, WorkRequest } from '@lockfabric/ports';
import { NicCounters } from './nic-counters.js';
import type { NodeMemory } from './node-memory.js';

export interface NicOptions {
  /** Extended (masked) atomics; without them masked verbs complete with 'unsupported'. Default true. */
  readonly maskedAtomics?: boolean;
  /** Share or inspect counters from outside; a fresh set by default. */
  readonly counters?: NicCounters;
}

/** A node's RDMA NIC: executes work requests on the node's memory and counts them. */
export class Nic {
  readonly counters: NicCounters;
  readonly #maskedAtomics: boolean;

  constructor(
    readonly memory: NodeMemory,
    options: NicOptions = {},
  ) {
    this.counters = options.counters ?? new NicCounters(memory.node);
    this.#maskedAtomics = options.maskedAtomics ?? true;
  }

  get node(): NodeId {
    return this.memory.node;
  }

  capabilities(): NicCapability[] {
    return this.#maskedAtomics ? ['masked-atomics'] : [];
  }

  /**
   * One doorbell: executes the batch in order (RC queue-pair order) and returns one completion per
   * request. A failed request does not stop the rest; unlike a real RC queue pair, which would flush
   * them, each gets its own status, which keeps the model simple and the errors specific.
   */
  executeBatch(batch: readonly WorkRequest[], initiator: NodeId): Completion[] {
    if (batch.length === 0) return [];
    this.counters.recordDoorbell();
    const completions = new Array<Completion>(batch.length);
    for (let i = 0; i < batch.length; i++) completions[i] = this.#executeOne(batch[i] as WorkRequest, initiator);
    return completions;
  }

  /** A batch of one: counts one doorbell. */
  execute(wr: WorkRequest, initiator: NodeId): Completion {
    this.counters.recordDoorbell();
    return this.#executeOne(wr, initiator);
  }

  #executeOne(wr: WorkRequest, initiator: NodeId): Completion {
    const completion =
      !this.#maskedAtomics && (wr.op === 'masked-cas' || wr.op === 'masked-faa')
        ? { status: 'unsupported' as const, detail: `the NIC of node ${this.node} has no extended (masked) atomics` }
        : this.memory.execute(wr, initiator);
    this.counters.record(wr, initiator, completion);
    return completion;
  }
}
