import { MAX_RACKS, rackOfComputeIndex, rackOfLock } from '@lockfabric/ports';
import type { LockPacket, NodeId } from '@lockfabric/ports';
import type { SwitchProgram } from '@lockfabric/switch';

/** Several racks, one switch each, the lock ids partitioned over them (FissLock §5.4). */
export interface RackConfig {
  /** Switches (racks); 1 = the single-switch cluster. */
  readonly racks: number;
  /** One-way extra latency of a packet to or from another rack's switch; default 2 µs (cost model `interRackNs`). */
  readonly interRackNs?: number;
  /**
   * Test-only mutant: machines of odd racks send each lock to the next rack's switch, not its
   * owner's — two switches then decide one lock (each still sees one gap-free window per machine).
   */
  readonly mutantShiftedRouting?: boolean;
  /** The switch program of racks 1…R−1 (rack 0 runs the cluster's `switchProgram`); each needs its own instance. */
  readonly programOf?: (rack: number) => SwitchProgram;
}


/**
 * Where a cluster's switch packets go: each lock to its owner's switch (`rackOfLock`, shared with
 * the protocols), and what a packet pays to cross racks. Memory nodes sit in rack 0.
 */
export class RackTopology {
  readonly racks: number;
  readonly interRackNs: number;
  private readonly rackOf = new Map<NodeId, number>();

  constructor(
    readonly config: RackConfig,
    computeNodeIds: readonly NodeId[],
  ) {
    if (!Number.isInteger(config.racks) || config.racks < 1 || config.racks > MAX_RACKS) throw new RangeError(`racks must be an integer in 1..${MAX_RACKS}, got ${config.racks}`);
    this.racks = config.racks;
    this.interRackNs = config.interRackNs ?? 2_000;
    computeNodeIds.forEach((node, i) => this.rackOf.set(node, rackOfComputeIndex(i, this.racks)));
  }

  rackOfMachine(machine: NodeId): number {
    return this.rackOf.get(machine) ?? 0;
  }

  /** The switch (rack) a packet sent by `from` goes to. */
  switchFor(packet: LockPacket, from: NodeId): number {
    const owner = rackOfLock(packet.lock, this.racks);
    if (this.config.mutantShiftedRouting === true && this.rackOfMachine(from) % 2 === 1) return (owner + 1) % this.racks;
    return owner;
  }

  /** Extra one-way latency between a machine and the switch of `rack`. */
  crossNs(machine: NodeId, rack: number): number {
    return this.rackOfMachine(machine) === rack ? 0 : this.interRackNs;
  }
}
