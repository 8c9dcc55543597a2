import type { InProcessControlPlugin } from '@lockfabric/control';
import { GatedSwitchPort, existingAgentPool, fisslock, isMachineFenced, machineRecovery, readFissLockOptions } from '@lockfabric/lock-fisslock';
import type { AgentPool, DeciderControl, FissSwitchControl, SwitchAdmissionState } from '@lockfabric/lock-fisslock';
import type { LockTableLayout, NodeId, SwitchPort } from '@lockfabric/ports';
import { followAdmissionOrders } from './admission-orders.js';
import type { AdmissionOrder } from './admission-orders.js';
import { startFissRecoveryHook } from './recovery-hook.js';
import type { FissRecoveryHook } from './recovery-hook.js';
import { startFissRecoveryResponder } from './recovery-responder.js';
import type { FissPoolHandle, FissResponder } from './recovery-responder.js';
import { startFissStuckReporter } from './stuck-reporter.js';

/** What FissLock recovery needs of an in-process run. */
export interface InProcessFissRecovery {
  /** The node's agent pool (recovery steps and policy), once its FissLock service runs. */
  poolOf(node: NodeId): FissPoolHandle | undefined;
  /** The node's agent pool itself (its stuck-lock watchdog), once its FissLock service runs. */
  agentPoolOf(node: NodeId): AgentPool | undefined;
  /** The node's switch link gate (shared by its clients and its service). */
  gateOf(node: NodeId): GatedSwitchPort;
  /** The switch model's control plane as S3 writes it (and its admission state). */
  switchControl(): FissSwitchControl;
  /** A coordinator's admission order reached the switch. */
  admit(order: AdmissionOrder): void;
}

/** A switch model as S3 writes it: its register arrays. */
export interface RegisterSwitch {
  registerControl(): DeciderControl;
}

/** The parts of an in-process cluster the FissLock wiring reads (the sim's InMemoryCluster has them). */
export interface FissCluster {
  readonly layout: LockTableLayout;
  switchPort(node: NodeId): SwitchPort;
  readonly switch: RegisterSwitch | undefined;
  readonly switches: readonly RegisterSwitch[];
}

/** Waits scaled to a sim run (the live defaults are for a loaded cluster: seconds). */
export interface InProcessFissTimings {
  /** Stuck-lock reports this close to the end of the last repair are dropped. Default 1 ms, below the swarm's T_STUCK. */
  readonly stuckRepairIntervalMs?: number;
  /** Test-only: the coordinator repairs a stalled-queue suspicion without asking the nodes. */
  readonly mutantRepairSuspicionUnconfirmed?: boolean;
}

/**
 * FissLock recovery in a run that holds the whole cluster in one process, wired as a compute node
 * process wires it: each machine's switch link goes through one gate (its clients and agent pool
 * share it), the responder finds the machine's agent pool in the run's registry, and S3 writes the
 * switch model's registers. `fissInProcessWiring` gives it to a run whose switch runs FissLock only.
 */
export class FissInProcessWiring {
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

  /** What the control plane needs, once the cluster exists. */
  recovery(cluster: FissCluster, options: Readonly<Record<string, string | number | boolean>> | undefined): InProcessFissRecovery {
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

  /** FissLock's in-process control plug-in over this wiring and `cluster`. */
  plugin(cluster: FissCluster, options: Readonly<Record<string, string | number | boolean>> | undefined, timings: InProcessFissTimings = {}): InProcessControlPlugin {
    return fissInProcessControl(this.recovery(cluster, options), timings);
  }
}

/** The wiring for a run of `protocol`: FissLock's switch program only (another run gets none). */
export function fissInProcessWiring(protocol: { readonly switchProgram?: string }, mutantFirstRackOnly = false): FissInProcessWiring | undefined {
  return protocol.switchProgram === fisslock.switchProgram ? new FissInProcessWiring(mutantFirstRackOnly) : undefined;
}

/** The switch model's registers as the recovery hook writes them (S3), with its admission state. */
export function switchModelControl(sw: RegisterSwitch, admission: SwitchAdmissionState): FissSwitchControl {
  return {
    ...sw.registerControl(),
    load: async () => undefined,
    admission,
    close: () => undefined,
  };
}

/**
 * FissLock's parts of an in-process control plane: each compute node answers the coordinator's
 * S1–S2 calls with the real responder over its agent pool and gated switch link, and its agent
 * pool's watchdog reports stuck locks; the switch heartbeats and follows admission orders; each
 * coordinator life runs the real recovery hook, which writes S3 through the switch model's
 * registers. Counts `fissRecoveries`: S1–S3 rounds that reached their resume on the compute nodes
 * (the most any node answered).
 */
export function fissInProcessControl(fiss: InProcessFissRecovery, timings: InProcessFissTimings = {}): InProcessControlPlugin {
  const responders: FissResponder[] = [];
  /** One per coordinator life. */
  const hooks: FissRecoveryHook[] = [];
  const sum = (read: (h: FissRecoveryHook) => number): number => hooks.reduce((total, h) => total + read(h), 0);
  return {
    computeNode: ({ bus, subjects, clock, node, logger, malformed }) => {
      // S1 waits out this node's pause limit (live: 15 s); sim runs last milliseconds
      const responder = startFissRecoveryResponder({ bus, subjects, clock, node, pool: () => fiss.poolOf(node), gate: fiss.gateOf(node), logger, malformed, pauseLimitMs: 100 });
      responders.push(responder);
      // the agent pool's watchdog asks the coordinator for a per-lock repair (S1–S3), as on live
      const stuck = startFissStuckReporter({ bus, subjects, clock, node, pool: () => fiss.agentPoolOf(node), logger, attachEveryMs: 0.05, followRuns: false });
      return {
        close: () => {
          responder.close();
          stuck.close();
        },
      };
    },
    switchMember: ({ bus, subjects, malformed }) => void followAdmissionOrders(bus, subjects, malformed, (order) => fiss.admit(order)),
    announcesSwitch: true,
    coordinator: () => ({
      recoveryDrivers: [
        (context) => {
          const hook = startFissRecoveryHook({
            ...context,
            switchControl: () => fiss.switchControl(),
            callTimeoutMs: 20,
            settleMs: 0.05,
            announceWaitMs: 5,
            pollMs: 0.05,
            // at the live default (2 s) a sim run got one repair in all
            stuckRepairIntervalMs: timings.stuckRepairIntervalMs ?? 1,
            attempts: { culpritAttempts: 2, retryDelayMs: 1, maxRetryDelayMs: 10 },
            ...(timings.mutantRepairSuspicionUnconfirmed === true ? { mutantRepairSuspicionUnconfirmed: true } : {}),
          });
          hooks.push(hook);
          return hook;
        },
      ],
    }),
    counts: () => ({
      fissRecoveries: Math.max(0, ...responders.map((r) => r.answered.resume)),
      // what the coordinator's triage made of the watchdog's suspicions (stuck-triage.ts)
      fissSuspicions: sum((h) => h.triage.suspicions),
      fissSuspicionsDismissed: sum((h) => h.triage.dismissed),
      fissSuspicionsRepaired: sum((h) => h.triage.suspicionRepairs),
    }),
    // packet loss can leave a lock only the per-lock repair frees (FissLock §7): its watchdog reports need a coordinator
    needsControl: true,
  };
}
