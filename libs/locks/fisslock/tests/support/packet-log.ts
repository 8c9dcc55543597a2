import type { LockPacket, NodeId } from '@lockfabric/ports';
import { FLAG_HAS_AGENT, WAITER_COUNT_SHIFT, ackStatusOf, clientOfTask } from '../../src/wire.js';
import { fissSim } from './fiss-sim.js';
import type { FissSimOptions } from './fiss-sim.js';

/** Bit i of `flags` is FLAG_NAMES[i] (src/wire.ts); bits 9–10 are the ACK status, 16+ the waiter count. */
const FLAG_NAMES = ['AGENT', 'INVALID', 'GRANTED', 'BOUNCED', 'DUP', 'ABORT', 'REACHED', 'WW_NEXT', 'CUR_SHARED'];

export interface LoggedPacket {
  readonly atNs: number;
  /** `out`: machine → switch; `in`: switch → machine. */
  readonly direction: 'in' | 'out';
  readonly machine: NodeId;
  readonly packet: LockPacket;
}

/**
 * Every packet between the machines and the switch, in virtual-time order, written as one line
 * each so a scripted test can compare the exact exchange: `A→sw acquire B/1 X`, `sw→A grant A/0 X
 * [AGENT] inca=0`. Machines are named by letter in order (first compute node A); `B/1` is the
 * requester / grantee machine and its client index; modes are S / X.
 */
export class PacketLog {
  readonly entries: LoggedPacket[] = [];
  private names = new Map<NodeId, string>();

  /** Names the machines A, B, C… in this order (the sim's compute nodes, known once it is built). */
  nameMachines(nodes: readonly NodeId[]): void {
    this.names = new Map(nodes.map((n, i) => [n, String.fromCharCode(65 + i)]));
  }

  /** The `tap` of fissSim. */
  readonly tap = (direction: 'in' | 'out', machine: NodeId, packet: LockPacket, atNs: number): void => {
    this.entries.push({ atNs, direction, machine, packet });
  };

  /** Where the log is now, for `lines(from)`. */
  mark(): number {
    return this.entries.length;
  }

  lines(from = 0, keep: (e: LoggedPacket) => boolean = () => true): string[] {
    return this.entries.slice(from).filter(keep).map((e) => this.describe(e));
  }

  name(node: NodeId | undefined): string {
    return node === undefined ? '-' : (this.names.get(node) ?? `m${node}`);
  }

  describe(e: LoggedPacket): string {
    const p = e.packet;
    const hop = e.direction === 'out' ? `${this.name(e.machine)}→sw` : `sw→${this.name(e.machine)}`;
    return `${hop} ${this.body(p)}${flagText(p.flags)}${this.tail(p)}`;
  }

  private body(p: LockPacket): string {
    const who = `${this.name(p.machine)}/${clientOfTask(p.task)}`;
    const mode = p.mode === 'shared' ? 'S' : 'X';
    switch (p.type) {
      case 'ack':
        return `ack ${ackStatusOf(p.flags)} →${this.name(p.dst)}`;
      case 'free':
        return `free ${mode}`;
      case 'notify':
        return 'starve';
      case 'release':
        return `release ${who}`;
      default:
        return `${p.type} ${who} ${mode}`;
    }
  }

  private tail(p: LockPacket): string {
    if (p.type === 'free') return ` inca=${p.incarnation}`;
    if (p.type === 'grant' && (p.flags & FLAG_HAS_AGENT) !== 0) {
      const waiters = p.flags >>> WAITER_COUNT_SHIFT;
      return ` inca=${p.incarnation}${waiters > 0 ? ` waiters=${waiters}` : ''}`;
    }
    return '';
  }
}

function flagText(flags: number): string {
  const names = FLAG_NAMES.filter((_, i) => (flags & (1 << i)) !== 0);
  return names.length > 0 ? ` [${names.join(',')}]` : '';
}

/** A fissSim whose every packet goes to a PacketLog (`sim.log`). */
export function loggedSim(options: Omit<FissSimOptions, 'tap'> = {}) {
  const log = new PacketLog();
  const sim = fissSim({ ...options, tap: log.tap });
  log.nameMachines(sim.nodes);
  return { ...sim, log };
}
