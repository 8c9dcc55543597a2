import { MAX_RACKS, rackOfLock } from '@lockfabric/ports';
import type { Clock, LockPacket, NodeId, SwitchPort } from '@lockfabric/ports';
import { ReliableLink } from './reliable-link.js';

/** What the agent pool and clients use of a machine's sequenced path to the switches. */
export type SequencedLink = Pick<
  ReliableLink,
  'send' | 'lastSeq' | 'resent' | 'acknowledge' | 'someOutstanding' | 'voidOutstanding' | 'outstandingPackets' | 'stop' | 'unacked' | 'retransmissions' | 'intercept'
>;

export interface SequencedLinkOptions {
  readonly rtoNs: number;
  readonly pacingNs: number;
  readonly rtoMaxBackoff?: number;
  /** Switches the lock ids are partitioned over (FissLock §5.4); 1 = one switch. */
  readonly racks?: number;
}

/** One sequenced link, or one per rack's switch when the lock ids are partitioned over several. */
export function createSequencedLink(machine: NodeId, port: SwitchPort, clock: Clock, options: SequencedLinkOptions): SequencedLink {
  const racks = options.racks ?? 1;
  if (racks <= 1) return new ReliableLink(machine, port, clock, options.rtoNs, options.pacingNs, options.rtoMaxBackoff ?? 1);
  return new RackLinks(racks, () => new ReliableLink(machine, port, clock, options.rtoNs, options.pacingNs, options.rtoMaxBackoff ?? 1));
}

/**
 * Multi-rack FissLock (§5.4): each switch keeps a sequence window per machine and accepts only
 * `last + 1`, so a machine keeps one window per switch, i.e. one ReliableLink per rack. A packet
 * and everything that answers it (ACK, refusal, GRANT) name the same lock, so the lock's owner
 * (`rackOfLock`) picks the link both ways; the port routes by the same function.
 */
export class RackLinks implements SequencedLink {
  private readonly links: ReliableLink[];
  private interceptor: ReliableLink['intercept'];

  constructor(racks: number, make: () => ReliableLink) {
    this.links = Array.from({ length: racks }, make);
  }

  private linkOf(lock: number): ReliableLink {
    return this.links[rackOfLock(lock, this.links.length)] as ReliableLink;
  }

  get intercept(): ReliableLink['intercept'] {
    return this.interceptor;
  }

  set intercept(value: ReliableLink['intercept']) {
    this.interceptor = value;
    for (const link of this.links) link.intercept = value;
  }

  get unacked(): number {
    return this.links.reduce((n, link) => n + link.unacked, 0);
  }

  get retransmissions(): number {
    return this.links.reduce((n, link) => n + link.retransmissions, 0);
  }

  send(packet: Omit<LockPacket, 'seq' | 'agent'>, onAck?: (ack: LockPacket) => void): number {
    return this.linkOf(packet.lock).send(packet, onAck);
  }

  lastSeq(lock: number): number {
    return this.linkOf(lock).lastSeq(lock);
  }

  resent(lock: number, seq: number): boolean {
    return this.linkOf(lock).resent(lock, seq);
  }

  acknowledge(seq: number, ack: LockPacket): boolean {
    return this.linkOf(ack.lock).acknowledge(seq, ack);
  }

  someOutstanding(match: (packet: LockPacket) => boolean): boolean {
    return this.links.some((link) => link.someOutstanding(match));
  }

  /** The filler must keep the packet's lock (it does: a void transfer of the same lock), so it stays in its switch's window. */
  voidOutstanding(match: (packet: LockPacket) => boolean, filler: (packet: LockPacket) => Omit<LockPacket, 'seq' | 'agent'>): number {
    return this.links.reduce((n, link) => n + link.voidOutstanding(match, filler), 0);
  }

  /** Every link's unacknowledged packets; seqs are per link, so equal seqs of two racks can both appear. */
  outstandingPackets(): LockPacket[] {
    return this.links.flatMap((link) => link.outstandingPackets());
  }

  stop(): void {
    for (const link of this.links) link.stop();
  }
}

/**
 * Which sender window a sequenced packet belongs to, as a number for dedup keys: its machine, and
 * with several racks also its switch, since each switch numbers a machine's packets from 1.
 */
export function seqStreamOf(p: Pick<LockPacket, 'agent' | 'machine' | 'lock'>, racks: number): number {
  const src = p.agent ?? p.machine;
  return racks <= 1 ? src : src * MAX_RACKS + rackOfLock(p.lock, racks);
}
