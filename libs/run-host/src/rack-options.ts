import type { ProtocolDefinition } from '@lockfabric/locks-common';
import { ConfigError } from '@lockfabric/ports';

/**
 * A compute node of a multi-rack cluster (`switch.racks` > 1, FissLock §5.4) routes each lock's
 * packets to the switch that owns it; the protocol must keep one sequence window per switch, so it
 * is told the node's rack count through its `racks` option. A switch protocol without that option
 * cannot run there; a run that names another count is refused rather than left to stall.
 */
export function withClusterRacks(protocol: ProtocolDefinition, options: Readonly<Record<string, string>>, racks: number): Readonly<Record<string, string>> {
  const stated = options['racks'];
  // a run asking for racks this node does not route over would number packets per switch while all go to one: refused
  if (racks <= 1) {
    if (stated !== undefined && String(stated) !== '1') throw new ConfigError([`racks: the run asks for ${String(stated)} but this cluster has 1 rack (start it with cluster up --racks ${String(stated)})`]);
    return options;
  }
  if (!protocol.switchProgram) return options;
  if (!('racks' in (protocol.options ?? {}))) throw new ConfigError([`this cluster has ${racks} racks (switch.racks); ${protocol.id} does not partition lock ids over several switches (only fisslock does)`]);
  if (stated !== undefined && String(stated) !== String(racks)) throw new ConfigError([`racks: the run asks for ${String(stated)} but this cluster has ${racks} (switch.racks)`]);
  return { ...options, racks: String(racks) };
}
