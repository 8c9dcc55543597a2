import type { Clock, LockId, LockMode, LockPacket, NodeId, SwitchPort } from '@lockfabric/ports';
import { ReliableLink } from './reliable-link.js';
import {
  FLAG_ABORT,
  FLAG_BOUNCED,
  FLAG_CUR_SHARED,
  FLAG_DUP,
  FLAG_GRANTED,
  FLAG_HAS_AGENT,
  FLAG_INVALID,
  FLAG_WW_NEXT,
  WAITER_COUNT_SHIFT,
  ackFlags,
  ackStatusOf,
} from './wire.js';
import type { AckStatus } from './wire.js';

export type FissPolicy = 'read-preferring' | 'starvation-prevention' | 'write-preferring';

export interface Waiter {
  readonly mid: NodeId;
  readonly task: number;
  readonly mode: LockMode;
}

/** One lock's agent (spec §2.2): holders keyed `mid:task`, FIFO wait queue. */
export interface Agent {
  mode: LockMode;
  inca: number;
  readonly holders: Set<string>;
  wqueue: Waiter[];
}

export interface AgentPoolOptions {
  readonly policy: FissPolicy;
  readonly rtoNs: number;
  readonly pacingNs: number;
  readonly starvePeriodNs: number;
  /** Test-only mutant: process duplicated sequenced packets again instead of re-ACKing them. */
  readonly mutantNoDuplicateSuppression: boolean;
}

/** What a client on this machine waits for: its GRANT (or the end of its abort). */
export interface TaskListener {
  granted(packet: LockPacket): void;
}

const key = (mid: NodeId, task: number): string => `${mid}:${task}`;

/**
 * A machine's FissLock runtime: the agent pool (spec §4.3) plus the receive path every client of
 * the machine shares — ACKs to the reliable link, GRANTs to the waiting task, lock requests and
 * refusals to the agents. One instance per machine; clients call the `tryLocal*` methods directly
 * (workflows ④–⑦ without the network) and send the rest through `link`.
 */
export class AgentPool {
  readonly agents = new Map<LockId, Agent>();
  readonly pending = new Map<LockId, Agent>();
  readonly link: ReliableLink;
  readonly listeners = new Map<number, TaskListener>();
  /** Per-origin dedup window (spec §5.1 rule 4): `src:seq` → the status it was ACKed with. */
  private readonly seen = new Map<string, AckStatus>();
  /** Transfer entries (one wait-queue element each) by `src:seq`, and transfer GRANTs waiting for them. */
  private readonly entries = new Map<string, Waiter>();
  private readonly stashedTransfers: LockPacket[] = [];
  private readonly starving = new Set<LockId>();
  private readonly unsubscribe: () => void;
  counters = { bounced: 0, duplicates: 0, installs: 0, localGrants: 0, refusals: 0 };

  constructor(
    readonly machine: NodeId,
    private readonly port: SwitchPort,
    private readonly clock: Clock,
    readonly options: AgentPoolOptions,
  ) {
    this.link = new ReliableLink(machine, port, clock, options.rtoNs, options.pacingNs);
    this.unsubscribe = port.onPacket((packet) => this.receive(packet));
  }

  stop(): void {
    this.unsubscribe();
    this.link.stop();
    this.starving.clear();
  }

  // ---- local paths (④–⑦), called by clients of this machine ----

  tryLocalAcquire(lid: LockId, task: number, mode: LockMode): 'granted' | 'queued' | 'no-agent' {
    const a = this.agents.get(lid);
    if (!a) return 'no-agent';
    if (mode === 'shared' && a.mode === 'shared' && !this.blocksReaders(a)) {
      a.holders.add(key(this.machine, task)); // ④
      this.counters.localGrants++;
      return 'granted';
    }
    a.wqueue.push({ mid: this.machine, task, mode }); // ⑤
    this.maybeStarve(lid, a);
    return 'queued';
  }

  /** Removes a locally queued waiter that gave up; false if it is not queued here. */
  abortLocal(lid: LockId, task: number): boolean {
    const a = this.agents.get(lid);
    if (!a) return false;
    const at = a.wqueue.findIndex((w) => w.mid === this.machine && w.task === task);
    if (at < 0) return false;
    a.wqueue.splice(at, 1);
    return true;
  }

  tryLocalRelease(lid: LockId, task: number): 'done' | 'no-agent' | 'not-found' {
    const a = this.agents.get(lid);
    if (!a) return 'no-agent';
    return this.releaseCore(lid, a, this.machine, task) ? 'done' : 'not-found';
  }

  // ---- receive path ----

  private receive(p: LockPacket): void {
    if (p.type === 'ack') {
      if (p.dst === this.machine) this.link.acknowledge(p.seq, p);
      return;
    }
    const refusal = (p.flags & FLAG_INVALID) !== 0;
    if (refusal) return this.onRefused(p);
    if (p.type === 'grant' && (p.flags & FLAG_HAS_AGENT) !== 0 && p.agent === undefined) return this.onSwitchGrant(p);
    if (p.type === 'grant' && p.agent === undefined) return this.deliver(p);
    // everything else is a sequenced packet from some server: dedup, then process and ACK
    const src = p.agent ?? p.machine;
    const id = `${src}:${p.seq}`;
    const seen = this.seen.get(id);
    if (seen !== undefined && !this.options.mutantNoDuplicateSuppression) {
      this.counters.duplicates++;
      this.ack(p, src, seen === 'accepted' ? 'duplicate' : seen);
      return;
    }
    const status = this.process(p);
    this.seen.set(id, status);
    this.ack(p, src, status);
  }

  private process(p: LockPacket): AckStatus {
    switch (p.type) {
      case 'acquire':
        return this.onAcquire(p);
      case 'release':
        return this.onRelease(p);
      case 'grant':
        if ((p.flags & FLAG_HAS_AGENT) === 0) {
          this.deliver(p);
          return 'accepted';
        }
        this.stashedTransfers.push(p);
        this.completeTransfers();
        return 'accepted';
      case 'transfer':
        this.entries.set(`${p.agent ?? p.machine}:${p.seq}`, { mid: p.machine, task: p.task, mode: p.mode });
        this.completeTransfers();
        return 'accepted';
      default:
        return 'accepted';
    }
  }

  private onAcquire(p: LockPacket): AckStatus {
    const a = this.agents.get(p.lock);
    if (!a) return this.bounce(p);
    const k = key(p.machine, p.task);
    if (a.holders.has(k) || a.wqueue.some((w) => key(w.mid, w.task) === k)) return 'duplicate';
    if ((p.flags & FLAG_GRANTED) !== 0) {
      a.holders.add(k); // ② the decider already granted: count it
      a.inca = (a.inca + 1) & 0xff;
    } else {
      a.wqueue.push({ mid: p.machine, task: p.task, mode: p.mode }); // ③
      this.maybeStarve(p.lock, a);
    }
    return 'accepted';
  }

  private onRelease(p: LockPacket): AckStatus {
    const a = this.agents.get(p.lock);
    if (!a || !this.releaseCore(p.lock, a, p.machine, p.task)) return this.bounce(p);
    return 'accepted';
  }

  /** Removes a holder (or an aborted waiter); hands the lock on when the last holder leaves. */
  private releaseCore(lid: LockId, a: Agent, mid: NodeId, task: number): boolean {
    const k = key(mid, task);
    if (!a.holders.delete(k)) {
      const at = a.wqueue.findIndex((w) => key(w.mid, w.task) === k);
      if (at < 0) return false; // the RELEASE overtook its ACQUIRE (§5.3): bounce
      a.wqueue.splice(at, 1);
      return true;
    }
    if (a.holders.size > 0) return true; // ⑥
    this.handOn(lid, a);
    return true;
  }

  private handOn(lid: LockId, a: Agent): void {
    this.agents.delete(lid);
    this.pending.set(lid, a);
    this.starving.delete(lid);
    const next = a.wqueue[0];
    if (!next) {
      // ⑦
      this.link.send({ type: 'free', lock: lid, machine: this.machine, task: 0, mode: a.mode, incarnation: a.inca, flags: 0 }, (ack) => {
        if (ackStatusOf(ack.flags) === 'freed' && this.pending.get(lid) === a) this.pending.delete(lid);
      });
      return;
    }
    // ⑧: the rest of the queue travels as transfer entries sequenced just before the GRANT
    const rest = a.wqueue.slice(1);
    rest.forEach((w, i) => this.link.send({ type: 'transfer', lock: lid, machine: w.mid, task: w.task, mode: w.mode, incarnation: i, flags: 0, dst: next.mid }));
    const flags =
      FLAG_HAS_AGENT |
      (a.mode === 'shared' ? FLAG_CUR_SHARED : 0) |
      (rest.some((w) => w.mode === 'exclusive') ? FLAG_WW_NEXT : 0) |
      (rest.length << WAITER_COUNT_SHIFT);
    this.link.send({ type: 'grant', lock: lid, machine: next.mid, task: next.task, mode: next.mode, incarnation: a.inca, flags }, (ack) => {
      if (ack.type === 'ack' && this.pending.get(lid) === a) this.pending.delete(lid);
    });
  }

  /** ① the switch granted a free lock: the GRANT carries an empty agent. */
  private onSwitchGrant(p: LockPacket): void {
    const listener = this.listeners.get(p.task);
    if (listener === undefined && this.discardStale(p)) return;
    this.install(p, []);
  }

  /** A stale ① GRANT for a request whose abort-release already freed the lock installs nothing. */
  discardedTasks = new Set<number>();
  private discardStale(p: LockPacket): boolean {
    return this.discardedTasks.has(p.task);
  }

  private completeTransfers(): void {
    for (let i = 0; i < this.stashedTransfers.length; i++) {
      const g = this.stashedTransfers[i] as LockPacket;
      const count = g.flags >>> WAITER_COUNT_SHIFT;
      const src = g.agent ?? g.machine;
      const ids = Array.from({ length: count }, (_, k) => `${src}:${g.seq - count + k}`);
      if (!ids.every((id) => this.entries.has(id))) continue;
      const queue = ids.map((id) => this.entries.get(id) as Waiter);
      for (const id of ids) this.entries.delete(id);
      this.stashedTransfers.splice(i--, 1);
      this.install(g, queue);
    }
  }

  /** Installs an agent carried by a GRANT (① or ⑧) and grants the leading run of shared waiters with it. */
  private install(g: LockPacket, queue: Waiter[]): void {
    this.counters.installs++;
    const a: Agent = { mode: g.mode, inca: 0, holders: new Set([key(g.machine, g.task)]), wqueue: queue };
    this.pending.delete(g.lock);
    this.agents.set(g.lock, a);
    if (a.mode === 'shared') {
      while (a.wqueue[0]?.mode === 'shared') {
        const w = a.wqueue.shift() as Waiter;
        a.holders.add(key(w.mid, w.task));
        this.link.send({ type: 'grant', lock: g.lock, machine: w.mid, task: w.task, mode: 'shared', incarnation: 0, flags: 0 });
      }
    }
    this.maybeStarve(g.lock, a);
    this.deliver(g);
  }

  /** A GRANT reaches its task; a GRANT nobody waits for is released at once (spec §5.2 stray grants). */
  private deliver(g: LockPacket): void {
    if (g.machine !== this.machine) return;
    const listener = this.listeners.get(g.task);
    if (listener) {
      listener.granted(g);
      return;
    }
    if (this.tryLocalRelease(g.lock, g.task) !== 'done') {
      this.link.send({ type: 'release', lock: g.lock, machine: this.machine, task: g.task, mode: g.mode, incarnation: 0, flags: 0 });
    }
  }

  /** FREE or transfer GRANT refused (or a timeout-free refused): restore the agent and wait for the delayed ② copies. */
  private onRefused(p: LockPacket): void {
    this.counters.refusals++;
    if (p.agent === this.machine) this.link.acknowledge(p.seq, p);
    if (this.agents.has(p.lock)) return; // never overwrite a live agent (§13.2)
    const a = this.pending.get(p.lock) ?? { mode: p.mode, inca: 0, holders: new Set<string>(), wqueue: [] };
    this.pending.delete(p.lock);
    if (p.type === 'grant') {
      a.wqueue.unshift({ mid: p.machine, task: p.task, mode: p.mode });
      a.mode = (p.flags & FLAG_CUR_SHARED) !== 0 ? 'shared' : 'exclusive';
    } else if ((p.flags & FLAG_ABORT) !== 0 && p.type === 'free') {
      a.mode = p.mode; // built empty after a refused timeout-free
    }
    a.holders.clear();
    a.inca = p.type === 'free' && (p.flags & FLAG_ABORT) !== 0 ? 0 : p.incarnation & 0xff;
    this.agents.set(p.lock, a);
  }

  private bounce(p: LockPacket): AckStatus {
    this.counters.bounced++;
    const { seq: _seq, agent: _agent, ...rest } = p;
    this.link.send({ ...rest, flags: p.flags | FLAG_BOUNCED });
    return 'bounced';
  }

  private ack(p: LockPacket, src: NodeId, status: AckStatus): void {
    if (src === this.machine) {
      this.link.acknowledge(p.seq, { ...p, type: 'ack', flags: ackFlags(status) | (p.flags & FLAG_DUP) });
      return;
    }
    // the DUP bit tells a requester that a BOUNCED status does not prove its request reached an agent (§5.2)
    this.port.send({ type: 'ack', lock: p.lock, machine: this.machine, task: p.task, mode: p.mode, incarnation: 0, seq: p.seq, flags: ackFlags(status) | (p.flags & FLAG_DUP), dst: src });
  }

  private blocksReaders(a: Agent): boolean {
    if (this.options.policy === 'read-preferring') return false;
    return a.wqueue.some((w) => w.mode === 'exclusive');
  }

  /** Starvation prevention: while a writer waits behind shared holders, tell the switch every period. */
  private maybeStarve(lid: LockId, a: Agent): void {
    if (this.options.policy !== 'starvation-prevention' || a.mode !== 'shared' || this.starving.has(lid)) return;
    if (!a.wqueue.some((w) => w.mode === 'exclusive')) return;
    this.starving.add(lid);
    void this.starveLoop(lid, a);
  }

  private async starveLoop(lid: LockId, a: Agent): Promise<void> {
    while (this.starving.has(lid) && this.agents.get(lid) === a && a.wqueue.some((w) => w.mode === 'exclusive')) {
      this.link.send({ type: 'notify', lock: lid, machine: this.machine, task: 0, mode: 'shared', incarnation: 0, flags: 0 });
      await this.clock.sleep(this.options.starvePeriodNs);
    }
    this.starving.delete(lid);
  }
}

