import type { LockPacket, NodeId } from '@lockfabric/ports';
import type { EgressAction } from './egress.js';
import type { PacketContext } from './packet-context.js';
import type { Pipeline } from './pipeline.js';

/** Where a packet entered the switch. */
export interface Ingress {
  readonly machine: NodeId;
}

/**
 * A data-plane program (`forward`, `fisslock`, `netlock`). `build` runs once, before the first
 * packet: it allocates register arrays and tables and may declare stage orders; the pipeline is
 * sealed afterwards. `process` runs once per packet and reaches switch state only through `ctx`,
 * which enforces the per-packet access rules (see packet-context.ts).
 */
export interface SwitchProgram {
  readonly name: string;
  build(pipeline: Pipeline): void;
  process(packet: LockPacket, ingress: Ingress, ctx: PacketContext): EgressAction[];
}
