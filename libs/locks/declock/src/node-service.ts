import type { NodeService, NodeServiceContext } from '@lockfabric/locks-common';
import { clientKey, lockAddress } from '@lockfabric/ports';
import type { Message } from '@lockfabric/ports';
import { joinClusterView } from './cluster-view.js';
import { perComputeNode } from './cn-registry.js';
import { CnSignals } from './cn-signals.js';
import { HeaderLayout } from './header.js';
import { epochOf, isDeclockMessage, isResetAnnouncement, resetAckMessage, resetIncarnation, tagOf } from './messages.js';

/**
 * DecLock's compute-node service (one per compute node and run, as client SERVICE_CLIENT):
 *
 * - records the run's compute nodes, and the ones the coordinator declares dead (FailureNotice),
 *   in the process's ClusterView, which lock resets consult (§3.6: the failure detector);
 * - answers every RESET with a RESET_ACK to the resetter once no client of this node is a queue
 *   member of the lock (the RESET closed the node's gate first, so none becomes one before the
 *   reset is over). A repeated RESET (a resend, or a second resetter taking over) is answered again.
 *   A RESET about a newer table incarnation than the node follows makes it reset its own state
 *   for that memory node first (a restarted memory node, §4.6); a RESET about a lost table gets
 *   no answer.
 */
export class DeclockNodeService implements NodeService {
  /** Acks owed, one per (lock, resetter, epoch): a resend while one is pending adds nothing. */
  private readonly pending = new Set<string>();
  private readonly stopping = new AbortController();
  private readonly unsubscribe: () => void;
  private readonly signals: CnSignals;
  acksSent = 0;

  constructor(
    private readonly context: NodeServiceContext,
    protocol: string,
    capacity: number,
    /** Test-only: the node keeps its state across memory-node restarts (options.mutantNoTableReset). */
    private readonly ignoreTables = false,
  ) {
    const { ports } = context;
    const view = joinClusterView(ports.locks, protocol);
    for (const node of context.computeNodes) view.computeNodes.add(node);
    view.computeNodes.add(ports.self.node);
    this.unsubscribe = context.failures?.onComputeNodeFailed((node) => view.markDead(node)) ?? (() => undefined);
    const header = new HeaderLayout(capacity);
    // The same board the node's clients use (cql-context.ts registers it under this key).
    this.signals = perComputeNode(ports.locks, `${protocol}/C${capacity}/signals`, ports.self.node, () => new CnSignals(ports.self.node, header.epochBits, (lock) => lockAddress(ports.locks, lock).node));
    void this.pump();
  }

  stop(): void {
    this.stopping.abort();
    this.unsubscribe();
  }

  private async pump(): Promise<void> {
    const { mailbox } = this.context.ports;
    try {
      for (;;) {
        const message = await mailbox.receive(isDeclockMessage, { signal: this.stopping.signal });
        if (!message) return;
        const reset = isResetAnnouncement(message);
        // A RESET of a newer table than the node follows tells it the memory node restarted.
        if (reset && !this.ignoreTables) this.signals.followTables(new Map([[lockAddress(this.context.ports.locks, message.lock).node, resetIncarnation(message)]]));
        this.signals.deliver(message);
        const ours = this.ignoreTables || tagOf(message) === this.signals.tagFor(message.lock);
        if (reset && ours) void this.acknowledge(message);
      }
    } catch {
      // the mailbox is gone (substrate shut down)
    }
  }

  private async acknowledge(reset: Message): Promise<void> {
    const epoch = epochOf(reset);
    const key = `${reset.lock}|${clientKey(reset.from)}|${epoch}`;
    if (this.pending.has(key)) return;
    this.pending.add(key);
    try {
      await this.signals.whenIdle(reset.lock);
      if (this.stopping.signal.aborted) return;
      this.context.ports.mailbox.send(resetAckMessage(reset.from, reset.lock, epoch, tagOf(reset)));
      this.acksSent++;
    } finally {
      this.pending.delete(key);
    }
  }
}
