import type { Clock, LockPacket, NodeId, SwitchPort } from '@lockfabric/ports';

interface Outstanding {
  packet: LockPacket;
  sentNs: number;
  /** How long after `sentNs` this packet counts as lost: rtoNs, doubled per resend up to the back-off bound. */
  timeoutNs: number;
  /** Sent more than once (a retransmission): the switch may have decided an earlier copy. */
  resent?: boolean;
  onAck?: (status: LockPacket) => void;
}

/**
 * A machine's sequenced path to the switch (spec §5.1): every new packet gets the next per-machine
 * seq, stays buffered until its ACK (or a refusal, or the switch GRANT) arrives, and is resent
 * go-back-N after the retransmission timeout. The resend loop runs only while something is
 * unacknowledged, so a quiet machine leaves no timer behind (the simulator ends when no event is left).
 *
 * With `maxBackoff` > 1 each packet's timeout doubles every time it is resent, up to
 * `maxBackoff` × `rtoNs`; a new packet starts at `rtoNs`. With a fixed timeout, a lock manager whose
 * queue outgrows `rtoNs` (an agent pool's core under a hot lock, sim's lock-manager CPU model) is
 * sent every unacknowledged packet again each round; the copies lengthen its queue further and the
 * run collapses into resends. (Resetting one shared timeout on any ACK is not enough: an ACK of the
 * oldest packet says nothing of the queue, and the next round resends the rest at once.) The
 * default stays fixed (1): the fault sweeps' regression seeds replay schedules taken with it.
 */
export class ReliableLink {
  private nextSeq = 0;
  private readonly outstanding = new Map<number, Outstanding>();
  private looping = false;
  private readonly wire: LockPacket[] = [];
  private pumping = false;
  private nextSendNs = 0;
  private stopped = false;
  retransmissions = 0;
  /**
   * Packets it answers are not sent: they get no seq (0 is returned) and their callback gets the
   * answer at once, on a microtask. The agent pool's per-lock quarantine (lock repair) uses it.
   */
  intercept: ((packet: Omit<LockPacket, 'seq' | 'agent'>) => LockPacket | undefined) | undefined;

  constructor(
    private readonly machine: NodeId,
    private readonly port: SwitchPort,
    private readonly clock: Clock,
    private readonly rtoNs: number,
    /** Gap between two sequenced packets on this link: a NIC sends one link's packets in order, while the simulator's per-packet jitter would reorder them. */
    private readonly pacingNs = 0,
    /** Largest multiple of `rtoNs` the timeout backs off to; 1 = a fixed timeout. */
    private readonly maxBackoff = 1,
  ) {
    if (!Number.isInteger(maxBackoff) || maxBackoff < 1) throw new RangeError(`maxBackoff must be an integer ≥ 1, got ${maxBackoff}`);
  }


  get unacked(): number {
    return this.outstanding.size;
  }

  /** The unacknowledged packets, oldest first (diagnostics and recovery). */
  outstandingPackets(): LockPacket[] {
    return [...this.outstanding.values()].map((e) => e.packet).sort((a, b) => a.seq - b.seq);
  }

  /** The seq of the last packet sent on this link (0 before the first); `lock` picks the window with several racks. */
  lastSeq(_lock: number): number {
    return this.nextSeq;
  }

  /** Sends `packet` as this machine's next sequenced packet; returns its seq. */
  send(packet: Omit<LockPacket, 'seq' | 'agent'>, onAck?: (ack: LockPacket) => void): number {
    const answer = this.intercept?.(packet);
    if (answer) {
      if (onAck) queueMicrotask(() => onAck(answer));
      return 0;
    }
    const seq = ++this.nextSeq;
    const stamped: LockPacket = { ...packet, seq, agent: this.machine };
    const entry: Outstanding = { packet: stamped, sentNs: this.clock.nowNs(), timeoutNs: this.rtoNs };
    if (onAck) entry.onAck = onAck;
    this.outstanding.set(seq, entry);
    this.transmit(stamped);
    this.startLoop();
    return seq;
  }

  /** Whether the unacknowledged packet `seq` was sent more than once; `lock` picks the window with several racks. */
  resent(_lock: number, seq: number): boolean {
    return this.outstanding.get(seq)?.resent === true;
  }

  /** Marks `seq` acknowledged by `ack` (an ACK, a refusal or a GRANT); false if it was not outstanding. */
  acknowledge(seq: number, ack: LockPacket): boolean {
    const entry = this.outstanding.get(seq);
    if (!entry) return false;
    this.outstanding.delete(seq);
    entry.onAck?.(ack);
    return true;
  }

  /** Whether an outstanding packet matches `match` (the switch may still have to process it). */
  someOutstanding(match: (packet: LockPacket) => boolean): boolean {
    for (const entry of this.outstanding.values()) if (match(entry.packet)) return true;
    return false;
  }

  /**
   * Replaces the content of the outstanding packets `match` picks with `filler(packet)`, keeping
   * their seq: each stays buffered and resent until its ACK, so the switch (which accepts only
   * `seq == last+1`) never meets a hole, but what it finally processes is the filler. Their
   * callbacks are dropped. Returns how many. Dropping an unacknowledged packet instead would leave
   * a seq the switch waits for for ever: every later packet of the machine dropped as a gap.
   */
  voidOutstanding(match: (packet: LockPacket) => boolean, filler: (packet: LockPacket) => Omit<LockPacket, 'seq' | 'agent'>): number {
    let count = 0;
    for (const entry of this.outstanding.values()) {
      if (!match(entry.packet)) continue;
      const { seq } = entry.packet;
      const stamped: LockPacket = { ...filler(entry.packet), seq, agent: this.machine };
      entry.packet = stamped;
      delete entry.onAck;
      // a copy still waiting for its pacing slot goes out as the filler too
      const queued = this.wire.findIndex((q) => q.seq === seq);
      if (queued >= 0) this.wire[queued] = stamped;
      count++;
    }
    return count;
  }

  stop(): void {
    this.stopped = true;
    this.outstanding.clear();
  }

  private transmit(packet: LockPacket): void {
    const now = this.clock.nowNs();
    if (!this.pumping && this.wire.length === 0 && now >= this.nextSendNs) {
      this.nextSendNs = now + this.pacingNs;
      this.port.send(packet);
      return;
    }
    this.wire.push(packet);
    if (!this.pumping) void this.pump();
  }

  private async pump(): Promise<void> {
    this.pumping = true;
    try {
      while (this.wire.length > 0 && !this.stopped) {
        const wait = this.nextSendNs - this.clock.nowNs();
        if (wait > 0) await this.clock.sleep(wait);
        const packet = this.wire.shift() as LockPacket;
        this.nextSendNs = this.clock.nowNs() + this.pacingNs;
        this.port.send(packet);
      }
    } finally {
      this.pumping = false;
    }
  }

  private startLoop(): void {
    if (this.looping || this.stopped) return;
    this.looping = true;
    void this.loop();
  }

  private async loop(): Promise<void> {
    try {
      while (!this.stopped && this.outstanding.size > 0) {
        await this.clock.sleep(this.rtoNs);
        const now = this.clock.nowNs();
        const due = [...this.outstanding.values()].sort((a, b) => a.packet.seq - b.packet.seq);
        const first = due[0];
        // go-back-N: once the oldest is overdue, resend everything after it in order
        if (!first || now - first.sentNs < first.timeoutNs) continue;
        for (const entry of due) {
          if (this.stopped) break;
          entry.sentNs = now;
          entry.resent = true;
          entry.timeoutNs = Math.min(entry.timeoutNs * 2, this.rtoNs * this.maxBackoff);
          this.retransmissions++;
          this.transmit(entry.packet);
        }
      }
    } finally {
      this.looping = false;
    }
  }
}
