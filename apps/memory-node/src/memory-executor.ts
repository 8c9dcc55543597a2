import { Nic, NicCounters, NodeMemory, TokenBucket, registerDescriptorRegion } from '@lockfabric/fabric';
import { FenceTable, refuseFenced } from '@lockfabric/live';
import type { ExecuteContext, MemoryDescription, MemoryExecutor } from '@lockfabric/live';
import { noopTrace } from '@lockfabric/ports';
import type { Clock, Completion, NodeId, SpanContextRef, Trace, WorkRequest } from '@lockfabric/ports';

export interface MemoryNodeLayout {
  readonly node: NodeId;
  /** Bytes of the lock-table region (region 0). */
  readonly lockTableBytes: number;
  readonly lockCount: number;
  readonly entryBytes: number;
  /** Verbs per second the NIC serves at most; undefined means as fast as the process can. */
  readonly iopsCap?: number;
  /** Bytes of the application data region (region 2); none when absent. */
  readonly dataBytes?: number;
}

/**
 * The memory node's NIC behind the MemoryService: region 0 holds the lock table. With an IOPS cap
 * a doorbell waits until the token bucket has a token for each of its verbs.
 */
export class MemoryNodeExecutor implements MemoryExecutor {
  readonly memory: NodeMemory;
  readonly nic: Nic;
  /** Compute nodes declared dead: their doorbells complete with `bad-rkey` ("fenced: …"), like revoked rkeys. */
  readonly fences = new FenceTable();
  private fencedRequests = 0;
  private readonly bucket: TokenBucket | undefined;

  constructor(
    private readonly layout: MemoryNodeLayout,
    private readonly clock: Clock,
    private readonly trace: Trace = noopTrace,
  ) {
    this.memory = new NodeMemory(layout.node);
    this.memory.register(layout.lockTableBytes);
    // Region 1: descriptor slots of clients co-located with this memory node (every substrate agrees).
    registerDescriptorRegion(this.memory, true);
    // Region 2: application data (object store, B+tree nodes), as on sim and embedded.
    if (layout.dataBytes) this.memory.register(layout.dataBytes);
    // No per-lock verb map: over millions of locks it outgrows the lock table (and every metrics
    // scrape's snapshot would copy it); the node's figures are per opcode and per initiator.
    this.nic = new Nic(this.memory, { counters: new NicCounters(layout.node, { perLock: false }) });
    this.bucket = layout.iopsCap ? new TokenBucket({ ratePerSec: layout.iopsCap, burst: Math.max(1, Math.ceil(layout.iopsCap / 1000)), startNs: clock.nowNs() }) : undefined;
  }

  executeBatch(batch: readonly WorkRequest[], initiator: NodeId, context?: ExecuteContext): Completion[] | Promise<Completion[]> {
    if (!this.bucket) return this.run(batch, initiator, context);
    const waitNs = this.bucket.reserve(this.clock.nowNs(), batch.length);
    if (waitNs <= 0) return this.run(batch, initiator, context);
    return this.clock.sleep(waitNs).then(() => this.run(batch, initiator, context));
  }

  /**
   * Executes a doorbell; verbs under a sampled trace context get a `verb.<op>` span on this node.
   * Under an unsampled parent the span would be non-recording (the sampler records no verb there),
   * so none is started: parsing its parent and asking the sampler cost ~12 µs a verb for nothing.
   */
  private run(batch: readonly WorkRequest[], initiator: NodeId, context: ExecuteContext | undefined): Completion[] {
    // Checked when the doorbell runs, not when it arrived: a batch that waited behind the fence is refused too.
    const refused = refuseFenced(this.fences, batch, initiator);
    if (refused) {
      this.fencedRequests += batch.length;
      return refused;
    }
    const traced = isSampled(context?.trace) || context?.requestTraces?.some(isSampled);
    if (!traced) return this.nic.executeBatch(batch, initiator);
    const spans = batch.map((wr, i) => {
      const parent = context?.requestTraces?.[i] ?? context?.trace;
      return isSampled(parent)
        ? this.trace.startSpan(`verb.${wr.op}`, {
            parent,
            attributes: { 'lockfabric.node': this.layout.node, 'lockfabric.verb.initiator': initiator, 'lockfabric.verb.offset': wr.addr.offset, ...(wr.lock !== undefined ? { 'lockfabric.lock.id': wr.lock } : {}) },
          })
        : undefined;
    });
    const completions = this.nic.executeBatch(batch, initiator);
    completions.forEach((completion, i) => {
      const span = spans[i];
      if (!span) return;
      span.setAttribute('lockfabric.verb.status', completion.status);
      span.end();
    });
    return completions;
  }

  /** Work requests refused because their initiator was fenced. */
  get fencedCount(): number {
    return this.fencedRequests;
  }

  describe(): MemoryDescription {
    return {
      node: this.layout.node,
      regions: this.memory.regions().map((r) => ({ region: r.region, rkey: r.rkey, sizeBytes: r.sizeBytes, name: r.region === 0 ? 'locks' : r.region === 1 ? 'descriptors' : r.region === 2 ? 'data' : `region-${r.region}` })),
      lockTables: [{ name: 'locks', region: 0, baseOffset: 0, entryBytes: this.layout.entryBytes, lockCount: this.layout.lockCount }],
    };
  }
}

/** W3C trace-flags bit 0: the head sampler sampled the trace. */
function isSampled(parent: SpanContextRef | undefined): parent is SpanContextRef {
  return parent !== undefined && (parent.traceFlags & 0x01) !== 0;
}
