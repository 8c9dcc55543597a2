import { GatedSwitchPort, existingAgentPool, isMachineFenced, machineRecovery, readFissLockOptions } from '@lockfabric/lock-fisslock';
import type { FissSwitchControl, SwitchAdmissionState } from '@lockfabric/lock-fisslock';
import type { ProtocolOptions } from '@lockfabric/locks-common';
import type { NodeId, SwitchPort } from '@lockfabric/ports';
import type { InMemoryCluster } from '@lockfabric/sim';
import type { Switch } from '@lockfabric/switch';
import type { SimFissRecovery } from './sim-control-plane.js';

/**
 * FissLock recovery in a sim run, wired as a compute node process wires it: each machine's switch
 * link goes through one gate (its clients and agent pool share it), the responder finds the
 * machine's agent pool in the run's registry, and S3 writes the switch model's registers.
 */
export class SimFissWiring {
  private readonly gates = new Map<NodeId, GatedSwitchPort>();
  /**
   * The switch's admission fence as the coordinator's orders set it (switch-dataplane's
   * PacketAdmission rule: the epoch never goes down). Sim packets carry no epoch stamp, so it
   * fences nothing here; a restarted coordinator reads it to find a recovery cut short.
   */
  private admission: SwitchAdmissionState = { open: true, epoch: 0n };

  /** `mutantFirstRackOnly` (test-only): S3 writes rack 0's switch alone, as if the coordinator knew one rack. */
  constructor(private readonly mutantFirstRackOnly = false) {}

  /** The cluster's `switchPortWrapper`: the machine's gate over its link. */
  readonly wrap = (machine: NodeId, link: SwitchPort): SwitchPort => {
    const gate = new GatedSwitchPort(link);
    this.gates.set(machine, gate);
    return gate;
  };

  /** What the sim control plane needs, once the cluster exists. */
  recovery(cluster: InMemoryCluster, options: ProtocolOptions | undefined): SimFissRecovery {
    const policy = readFissLockOptions(options).policy;
    return {
      poolOf: (node) => {
        const pool = existingAgentPool(cluster.layout, node);
        return pool && !isMachineFenced(pool) ? { pool: machineRecovery(pool), policy } : undefined;
      },
      agentPoolOf: (node) => {
        const pool = existingAgentPool(cluster.layout, node);
        return pool && !isMachineFenced(pool) ? pool : undefined;
      },
      gateOf: (node) => {
        if (!this.gates.has(node)) cluster.switchPort(node); // built on first use
        const gate = this.gates.get(node);
        if (!gate) throw new RangeError(`no switch link gate for machine ${node}: the cluster was built without this wiring`);
        return gate;
      },
      switchControl: () => {
        if (!cluster.switch) throw new RangeError('FissLock recovery needs the run to have a switch');
        // S3 writes every rack's decider (FissLock §5.4; lock-fisslock writeRackImages)
        const control = switchModelControl(cluster.switch, this.admission);
        return cluster.switches.length > 1 && !this.mutantFirstRackOnly ? { ...control, racks: cluster.switches.map((sw) => sw.registerControl()) } : control;
      },
      admit: (order) => {
        if (order.epoch >= this.admission.epoch) this.admission = { open: order.open, epoch: order.epoch };
      },
    };
  }
}

/** The switch model's registers as the recovery hook writes them (S3), with its admission state. */
export function switchModelControl(sw: Switch, admission: SwitchAdmissionState): FissSwitchControl {
  return {
    ...sw.registerControl(),
    load: async () => undefined,
    admission,
    close: () => undefined,
  };
}
