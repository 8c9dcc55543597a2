import type { LockPacket, SwitchPort } from '@lockfabric/ports';

/**
 * The switch port one run's clients share. Lock clients subscribe to the node's switch link when
 * they are created and have no close; without this, every finished run would leave its clients'
 * handlers on the link, each later packet would be offered to all of them, and they would pile up
 * run after run. `close` (at the run's end) removes them all and stops the run's clients sending.
 */
export class RunSwitchPort implements SwitchPort {
  private readonly subscriptions = new Set<() => void>();
  private closed = false;

  constructor(private readonly link: SwitchPort) {}

  get machine(): number {
    return this.link.machine;
  }

  /** Handlers the run's clients have registered and not removed. */
  get handlers(): number {
    return this.subscriptions.size;
  }

  send(packet: LockPacket): void {
    if (!this.closed) this.link.send(packet);
  }

  onPacket(handler: (packet: LockPacket) => void): () => void {
    if (this.closed) return () => undefined;
    const unsubscribe = this.link.onPacket(handler);
    const remove = () => {
      if (this.subscriptions.delete(remove)) unsubscribe();
    };
    this.subscriptions.add(remove);
    return remove;
  }

  close(): void {
    this.closed = true;
    for (const remove of [...this.subscriptions]) remove();
  }
}
