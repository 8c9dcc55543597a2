import type { LockPacket, NodeId, SwitchPort } from '@lockfabric/ports';

/** Packets held while closed, at most; beyond that they are dropped (the reliable link resends them). */
export const DEFAULT_GATE_HOLD_PACKETS = 65_536;

/**
 * This machine's switch link with a gate for FissLock recovery. Between S2 (the agent pool has its
 * repaired state and new links) and the end of S3 (the switch registers match it), nothing may
 * reach the switch or the pool: packets sent are held and go out when the gate opens, in order;
 * packets arriving are dropped (the switch decided them on registers S3 overwrites). Open, it is a
 * plain pass-through.
 */
export class GatedSwitchPort implements SwitchPort {
  private closed = false;
  private held: LockPacket[] = [];
  private readonly handlers = new Set<(packet: LockPacket) => void>();
  private readonly unsubscribe: () => void;
  heldDropped = 0;
  arrivalsDropped = 0;

  constructor(
    private readonly inner: SwitchPort,
    private readonly holdPackets = DEFAULT_GATE_HOLD_PACKETS,
  ) {
    this.unsubscribe = inner.onPacket((packet) => {
      if (this.closed) {
        this.arrivalsDropped++;
        return;
      }
      for (const handler of [...this.handlers]) handler(packet);
    });
  }

  get machine(): NodeId {
    return this.inner.machine;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  send(packet: LockPacket): void {
    if (!this.closed) return this.inner.send(packet);
    if (this.held.length < this.holdPackets) this.held.push(packet);
    else this.heldDropped++;
  }

  onPacket(handler: (packet: LockPacket) => void): () => void {
    // wrapped so the same function registered twice gets two independent registrations
    const registration = (packet: LockPacket): void => handler(packet);
    this.handlers.add(registration);
    return () => void this.handlers.delete(registration);
  }

  close(): void {
    this.closed = true;
  }

  /** Drops what was held (packets of a world recovery replaces); returns how many. */
  discardHeld(): number {
    const n = this.held.length;
    this.held = [];
    return n;
  }

  /** Sends what was held, oldest first, then passes everything through again; returns how many were sent. */
  open(): number {
    this.closed = false;
    const held = this.held;
    this.held = [];
    for (const packet of held) this.inner.send(packet);
    return held.length;
  }

  stop(): void {
    this.unsubscribe();
    this.handlers.clear();
    this.held = [];
  }
}
