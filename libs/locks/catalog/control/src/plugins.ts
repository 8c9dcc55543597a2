import type { ControlBus, ControlPlaneDeps, Logger, MalformedSink, Subjects, SwitchControlCaller, SwitchControlCallerFactory } from '@lockfabric/control';
import type { FissSwitchControlFactory } from '@lockfabric/lock-fisslock';
import type { QueueAllocation } from '@lockfabric/lock-netlock';
import type { FissRecoveryHookDeps } from '@lockfabric/lock-fisslock-control';
import type { Clock, LockPacket, LockTableLayout, NodeId, SwitchPort } from '@lockfabric/ports';
import { protocolRecoveries } from '@lockfabric/lock-catalog';
import type { queueProgram } from '@lockfabric/lock-catalog';
import { fisslockPlugins } from './fisslock-plugins.js';
import { netlockPlugins, netlockQueueInstaller } from './netlock-plugins.js';

/**
 * Node-service plug-ins: what a protocol adds to the coordinator and the compute node beyond its
 * lock client (recovery drivers and responders, fences, watchdog reports). The apps start every
 * plug-in listed here without knowing which protocol it belongs to; the transports (NATS, gRPC)
 * stay the apps' and come in through the deps.
 */

/** One reading of a monotonically growing count; the app exports it as a Prometheus counter. */
export interface CounterReading {
  readonly labels: Readonly<Record<string, string>>;
  readonly total: number;
}

/** A counter a plug-in contributes to its process's metrics. */
export interface PluginCounter {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly string[];
  read(): readonly CounterReading[];
}

/**
 * Opens the control service of a switch at `address` as a protocol's recovery drives it (gRPC in the
 * app); `initialValues` are the program's registers that reset to something other than 0, by array
 * name (the protocol's plug-in knows them, the app does not).
 */
export type SwitchProgramControlFactory = (address: string, initialValues: Readonly<Record<string, number>>) => ReturnType<FissSwitchControlFactory>;
export type { FissSwitchControl as SwitchProgramControl, SwitchAdmissionState } from '@lockfabric/lock-fisslock';

/** Timings a test may shorten in the coordinator's recovery plug-ins. */
export type RecoveryTimings = Pick<FissRecoveryHookDeps, 'callTimeoutMs' | 'settleMs' | 'announceWaitMs' | 'attempts' | 'stuckRepairIntervalMs' | 'participant'>;

export interface CoordinatorPluginDeps {
  /** Racks whose switches decide lock ids (`switch.racks`). */
  readonly racks?: number;
  /** Opens the control service of a switch at `address` (the app's gRPC client). */
  readonly switchControl: SwitchProgramControlFactory;
  /** Opens the SwitchControl service of a switch at `address` for a program's own calls (the app's gRPC client). */
  readonly switchCaller: SwitchControlCallerFactory;
  readonly timings?: RecoveryTimings;
}

/** What one protocol adds to the coordinator. */
export interface CoordinatorPlugin {
  /** Recovery-driver factories merged into the control plane's deps (libs/control). */
  readonly controlPlane: Partial<ControlPlaneDeps>;
  /** Counters for the coordinator's registry; read them only after the control plane started. */
  readonly counters: readonly PluginCounter[];
}

/** The run a compute node hosts now (or whose clients still linger): its lock table and options. */
export interface HostedRun {
  readonly locks: LockTableLayout;
  readonly options: Readonly<Record<string, string | number | boolean>> | undefined;
}

export interface ComputeNodePluginDeps {
  readonly bus: ControlBus;
  readonly clock: Clock;
  readonly subjects: Subjects;
  readonly node: NodeId;
  readonly run: () => HostedRun | undefined;
  readonly logger: Logger;
  readonly malformed: MalformedSink;
  /** A membership epoch heard in a control message (the node stamps its switch batches with it). */
  readonly onEpoch: (epoch: bigint) => void;
}

/** A started compute-node plug-in. */
export interface ComputeNodePluginHandle {
  /** This node was declared dead while running: cut its clients off with typed errors. */
  fence(reason: string): void;
  close(): void;
}

/** What one protocol adds to the compute node. */
export interface ComputeNodePlugin {
  /**
   * Interposes on the node's switch link, or returns it as it is; the node's runs use what the
   * last plug-in returned. Called once, before `start`.
   */
  wrapSwitch(link: SwitchPort): SwitchPort;
  start(deps: ComputeNodePluginDeps): ComputeNodePluginHandle;
  /** Releases what `wrapSwitch` holds, after the runs closed. */
  stopSwitch(): void;
}

/** What the switch-dataplane gives a program's own SwitchControl calls. */
export interface SwitchProgramCallsDeps {
  /** The loaded switch program. */
  readonly program: Parameters<typeof queueProgram>[0];
  /** Sends a packet the control plane made out of the switch port of `machine` (as the switch CPU). */
  readonly emit?: (machine: NodeId, packet: LockPacket) => void;
  readonly logger: Logger;
}

/** A program's own SwitchControl calls by method local name (request and response messages). */
export type SwitchProgramCalls = Readonly<Record<string, (request: unknown) => unknown>>;

/** Protocol plug-ins by protocol id (catalog ids; a catalog test keeps them so). */
interface ProtocolPlugins {
  readonly coordinator?: (deps: CoordinatorPluginDeps) => CoordinatorPlugin;
  readonly computeNode?: () => ComputeNodePlugin;
  /** The calls the protocol's switch program serves over SwitchControl, when it is loaded; none otherwise. */
  readonly switchCalls?: (deps: SwitchProgramCallsDeps) => SwitchProgramCalls;
}

const PLUGINS: ReadonlyMap<string, ProtocolPlugins> = new Map<string, ProtocolPlugins>([fisslockPlugins, netlockPlugins]);

/** The protocol ids that have node-service plug-ins. */
export function pluginProtocolIds(): readonly string[] {
  return [...PLUGINS.keys()];
}

/** Every protocol's coordinator plug-in. */
export function coordinatorPlugins(deps: CoordinatorPluginDeps): CoordinatorPlugin[] {
  return [...PLUGINS.values()].flatMap((p) => (p.coordinator ? [p.coordinator(deps)] : []));
}

/**
 * The plug-ins' contributions to the control plane's deps, as one object: single drivers by field
 * (each field has one contributor), recovery drivers concatenated in catalog order; and
 * every catalog protocol's recovery rules, which the recovery book keeps one action per.
 */
export function coordinatorControlPlane(plugins: readonly CoordinatorPlugin[]): Partial<ControlPlaneDeps> {
  return plugins.reduce<Partial<ControlPlaneDeps>>(
    (merged, p) => ({
      ...merged,
      ...p.controlPlane,
      recoveryDrivers: [...(merged.recoveryDrivers ?? []), ...(p.controlPlane.recoveryDrivers ?? [])],
    }),
    { protocolRecoveries: protocolRecoveries() },
  );
}

/**
 * The SwitchControl calls the loaded program serves beyond the generic ones (registers, faults,
 * describe, reset), by method local name; a call no plug-in serves for this program is absent.
 */
export function switchProgramCalls(deps: SwitchProgramCallsDeps): SwitchProgramCalls {
  return Object.assign({}, ...[...PLUGINS.values()].map((p) => p.switchCalls?.(deps) ?? {})) as SwitchProgramCalls;
}

/** Every protocol's compute-node plug-in. */
export function computeNodePlugins(): ComputeNodePlugin[] {
  return [...PLUGINS.values()].flatMap((p) => (p.computeNode ? [p.computeNode()] : []));
}

/**
 * Installs the queues a switch program planned for a run (the lock catalog's `planQueues`) on the
 * running switch over its control service, before the run. Resolves to what the switch reports.
 */
export type SwitchQueueInstaller = (caller: SwitchControlCaller, queues: readonly QueueAllocation[]) => Promise<{ readonly hotLocks: number; readonly slots: number }>;

/** Queue installers by switch program name (a program whose kind plans queues has one; a test keeps it so). */
const QUEUE_INSTALLERS: ReadonlyMap<string, SwitchQueueInstaller> = new Map<string, SwitchQueueInstaller>([netlockQueueInstaller]);

/** The queue installer of switch program `program`, if it installs queues. */
export function switchQueueInstaller(program: string): SwitchQueueInstaller | undefined {
  return QUEUE_INSTALLERS.get(program);
}
