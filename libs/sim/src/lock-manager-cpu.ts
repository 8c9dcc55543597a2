import type { LockPacket, NodeId } from '@lockfabric/ports';
import type { Scheduler } from './scheduler.js';

/**
 * Opt-in CPU cost of lock-manager roles (sim only). Without it a lock server or an agent pool
 * handles any number of packets at the same instant, so no system ever queues at its lock manager.
 * With it, every packet a machine's lock-manager service handles takes `packetNs` of one of that
 * machine's `coresFor(machine)` cores, FIFO: a packet starts on the first core to become free and
 * its handler runs when its service time ends (so replies leave then).
 */
export interface LockManagerCpuConfig {
  /** Service time of one packet on one core. */
  readonly packetNs: number;
  /** Lock-manager cores of a machine (at least 1). */
  readonly coresFor: (machine: NodeId) => number;
  /**
   * Whether a packet egressed to `machine` is lock-manager work. Packets that are not (a GRANT for
   * an application client, which a NIC steers to that client's core) reach the service at once.
   * Default: every packet.
   */
  readonly isWork?: (packet: LockPacket, machine: NodeId) => boolean;
  /**
   * Packets a machine may have waiting for a core (its receive ring); beyond it a packet is dropped
   * and counted, which the protocols see as loss. Default 65 536.
   */
  readonly queueBound?: number;
}

export const DEFAULT_LM_QUEUE_BOUND = 65_536;

export interface LockManagerCpuStats {
  /** Packets served by this machine's lock-manager cores. */
  readonly served: number;
  /** Packets dropped because the queue was full. */
  readonly dropped: number;
  /** Most packets ever waiting or in service at once. */
  readonly maxQueued: number;
  /** Total time packets waited for a core. */
  readonly queueingNs: number;
}

/** The lock-manager cores of one machine: a FIFO multi-server queue on the scheduler. */
export class LockManagerCores {
  /** When each core next becomes free. */
  private readonly freeAtNs: Float64Array;
  private queued = 0;
  private stats = { served: 0, dropped: 0, maxQueued: 0, queueingNs: 0 };

  constructor(
    private readonly scheduler: Scheduler,
    cores: number,
    private readonly packetNs: number,
    private readonly queueBound = DEFAULT_LM_QUEUE_BOUND,
  ) {
    if (!Number.isInteger(cores) || cores < 1) throw new RangeError(`lock-manager cores must be an integer ≥ 1, got ${cores}`);
    if (!(packetNs >= 0) || !Number.isFinite(packetNs)) throw new RangeError(`lmPacketNs must be a finite number ≥ 0, got ${packetNs}`);
    if (!Number.isInteger(queueBound) || queueBound < 1) throw new RangeError(`queue bound must be an integer ≥ 1, got ${queueBound}`);
    this.freeAtNs = new Float64Array(cores);
  }

  /**
   * Queues `handle` for one packet's service; false (and nothing runs) when the queue is full.
   * FIFO holds because a later submission never takes a core earlier than an earlier one did.
   */
  submit(handle: () => void): boolean {
    if (this.queued >= this.queueBound) {
      this.stats.dropped++;
      return false;
    }
    const nowNs = this.scheduler.nowNs();
    let core = 0;
    for (let c = 1; c < this.freeAtNs.length; c++) if ((this.freeAtNs[c] as number) < (this.freeAtNs[core] as number)) core = c;
    const startNs = Math.max(nowNs, this.freeAtNs[core] as number);
    const doneNs = startNs + this.packetNs;
    this.freeAtNs[core] = doneNs;
    this.queued++;
    this.stats.maxQueued = Math.max(this.stats.maxQueued, this.queued);
    this.stats.queueingNs += startNs - nowNs;
    this.scheduler.at(doneNs, () => {
      this.queued--;
      this.stats.served++;
      handle();
    });
    return true;
  }

  get counters(): LockManagerCpuStats {
    return { ...this.stats };
  }
}
