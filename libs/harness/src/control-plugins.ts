// The protocols' in-process control plug-ins, from their control packages: the one place in the
// harness that names them. The harness cannot take them from the catalog's plug-ins (the protocols'
// own tests run the harness: a project cycle), so it lists them as the catalog does for the apps;
// each package decides itself whether a run needs its part. The sim control plane (./control)
// starts whatever it is given and names no protocol.
import type { InProcessControlPlugin } from '@lockfabric/control';
import { fissInProcessWiring } from '@lockfabric/lock-fisslock-control';
import { netlockInProcessControl } from '@lockfabric/lock-netlock-control';
import type { ProtocolDefinition, ProtocolOptions } from '@lockfabric/locks-common';
import type { NodeId, SwitchPort } from '@lockfabric/ports';
import type { InMemoryCluster } from '@lockfabric/sim';
import type { SwitchProgram } from '@lockfabric/switch';
import { inProcessPurgeOf, purgesMachines } from './switch-programs.js';

export interface RunControlPluginOptions {
  readonly protocolOptions?: ProtocolOptions;
  /** Test-only: S3 writes rack 0's switch only. */
  readonly mutantFirstRackOnly?: boolean;
  /** Stuck-lock reports this close to the last repair are dropped (test-only: the live 2 s). */
  readonly stuckRepairIntervalMs?: number;
  /** Test-only: stalled-queue suspicions are repaired unconfirmed. */
  readonly mutantRepairSuspicionUnconfirmed?: boolean;
}

/** A run's control plug-ins: a switch-link wrapper for the cluster it builds, then the plug-ins over that cluster. */
export interface RunControlPlugins {
  readonly switchPortWrapper?: (machine: NodeId, link: SwitchPort) => SwitchPort;
  attach(cluster: InMemoryCluster, switchProgram: SwitchProgram | undefined): InProcessControlPlugin[];
}

export function runControlPlugins(protocol: ProtocolDefinition, options: RunControlPluginOptions = {}): RunControlPlugins {
  // a recovery that gates each machine's switch link, as the compute node process does
  const gated = fissInProcessWiring(protocol, options.mutantFirstRackOnly === true);
  return {
    ...(gated ? { switchPortWrapper: gated.wrap } : {}),
    attach: (cluster, switchProgram) => [
      ...(gated
        ? [
            gated.plugin(cluster, options.protocolOptions, {
              ...(options.stuckRepairIntervalMs === undefined ? {} : { stuckRepairIntervalMs: options.stuckRepairIntervalMs }),
              ...(options.mutantRepairSuspicionUnconfirmed === true ? { mutantRepairSuspicionUnconfirmed: true } : {}),
            }),
          ]
        : []),
      // a switch program that purges dead machines gets the coordinator's real purge trigger
      netlockInProcessControl(purgesMachines(switchProgram) ? { purge: inProcessPurgeOf(switchProgram, cluster) } : {}),
    ],
  };
}
