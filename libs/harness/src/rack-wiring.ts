import type { CostModel } from '@lockfabric/fabric';
import type { ProtocolDefinition, ProtocolOptions } from '@lockfabric/locks-common';
import { ConfigError, MAX_RACKS } from '@lockfabric/ports';
import type { InMemoryCluster, RackConfig } from '@lockfabric/sim';
import type { SwitchProgram } from '@lockfabric/switch';

/**
 * A multi-rack run (FissLock §5.4): the substrate routes each lock's packets to its owner's switch,
 * and the protocol, told the same rack count through its `racks` option, keeps one sequence window
 * per switch. Only a switch-family protocol with that option can run over several racks.
 */
export function rackProtocolOptions(protocol: ProtocolDefinition, racks: number, given: ProtocolOptions = {}): ProtocolOptions {
  if (racks === 1 && given['racks'] === undefined) return given;
  const problems: string[] = [];
  if (!Number.isInteger(racks) || racks < 1 || racks > MAX_RACKS) problems.push(`racks must be an integer in 1..${MAX_RACKS}, got ${racks}`);
  if (!protocol.switchProgram || !('racks' in (protocol.options ?? {}))) problems.push(`racks: ${protocol.id} does not partition lock ids over several switches (only fisslock does, FissLock §5.4)`);
  const stated = given['racks'];
  if (stated !== undefined && String(stated) !== String(racks)) problems.push(`racks: the run has ${racks} racks but --opt racks=${String(stated)}; give the count once, with --racks`);
  if (problems.length > 0) throw new ConfigError(problems);
  return { ...given, racks: String(racks) };
}

/** The cluster's rack settings: every rack's switch built by `build` (a fresh program each), inter-rack latency from the model. */
export function rackClusterConfig(racks: number, build: () => SwitchProgram, model: CostModel | undefined, mutantShiftedRouting: boolean): RackConfig {
  return {
    racks,
    ...(model ? { interRackNs: model.interRackNs } : {}),
    ...(mutantShiftedRouting ? { mutantShiftedRouting: true } : {}),
    programOf: () => build(),
  };
}

/** Packets each rack's switch processed, in rack order. */
export function switchPacketsPerRack(cluster: Pick<InMemoryCluster, 'switches'>): number[] {
  return cluster.switches.map((sw) => sw.counters().packets);
}

/** Decisions of every rack's switch, added up by name. */
export function switchDecisionsOfRacks(cluster: Pick<InMemoryCluster, 'switches'>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const sw of cluster.switches) for (const [name, n] of Object.entries(sw.counters().decisions)) out[name] = (out[name] ?? 0) + n;
  return out;
}
