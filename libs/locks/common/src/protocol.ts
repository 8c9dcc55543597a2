import type { ClientPorts, LockClient, LockId, LockMode, NicCapability, NodeId, ProtocolId } from '@lockfabric/ports';
import type { SwitchProgram } from '@lockfabric/switch';
import type { ProtocolRecovery } from './recovery-rule.js';
import type { SwarmProfile } from './swarm-profile.js';

/** Options a user can pass to a protocol (`--opt backoff=true`); each protocol validates its own. */
export type ProtocolOptions = Readonly<Record<string, string | number | boolean>>;

/** What the fabric a protocol needs looks like, so substrates and services can prepare it. */
export interface ProtocolDefinition {
  readonly id: ProtocolId;
  readonly summary: string;
  /** `verbs`: RDMA locks over memory nodes; `switch`: locks decided in or through the switch. */
  readonly fabric: 'verbs' | 'switch';
  readonly capabilities: readonly NicCapability[];
  /** Bytes of one lock's entry in the lock table on a memory node. */
  readonly entryBytes: number;
  readonly modes: readonly LockMode[];
  /** Option names with their meaning, shown by `lockfabric bench --help`. */
  readonly options: Readonly<Record<string, string>>;
  /** The switch program this protocol needs (`fabric: 'switch'`); `forward` comes from libs/switch, the others from `buildSwitchProgram`. */
  readonly switchProgram?: SwitchProgramName;
  /**
   * Builds this protocol's own switch program for a simulated run (its program lives in its module:
   * FissLock, NetLock): substrates call it instead of naming the protocol.
   */
  buildSwitchProgram?(input: SwitchProgramInput): SwitchProgram;
  /**
   * Refuses (ConfigError) a live switch started on its own whose program does not match what this
   * run's clients will send it, before any client starts. Absent: any running program will do.
   */
  checkRunningSwitch?(described: DescribedSwitchProgram, workloadLocks: number, options?: ProtocolOptions): void;
  /**
   * Options for the wall-clock substrates (live, embedded), where a verb over gRPC takes ~100 µs
   * rather than the ~2 µs of RDMA hardware the papers' defaults assume; `--opt` flags win over
   * them. Absent: the protocol's own defaults serve there too.
   */
  readonly liveDefaults?: ProtocolOptions;
  /** Servers the protocol runs on nodes beside its clients (agent pools, lock servers, recovery). */
  readonly services?: ProtocolServices;
  /**
   * Options the protocol's memory-node service reads. On live that service starts once with its
   * memory node, on its defaults, and outlives runs, so a run cannot set them: live refuses them
   * rather than run with a server that ignores them (or disagrees with its clients). Absent: none.
   */
  readonly memoryServiceOptions?: readonly string[];
  /** How its locks come back after a member fails: the coordinator books one action per rule. */
  readonly recovery: ProtocolRecovery;
  /** The faults `check --swarm` injects into this protocol; jitter and healing only when absent. */
  readonly swarm?: SwarmProfile;
  createClient(ports: ClientPorts, options?: ProtocolOptions): LockClient;
  /**
   * The definition fitted to a workload, for protocols whose lock entry grows with the contenders
   * (DecLock's queue capacity): runs use it instead of this one. Absent: one size fits all.
   */
  sizedFor?(workload: WorkloadSize, options?: ProtocolOptions): ProtocolDefinition;
  /** The protocol resets locks (DSLR's counters, DecLock's queues) and marks them: bench reports their count and latency. */
  readonly lockResets?: boolean;
}

/** What a protocol may size its lock entries by. */
export interface WorkloadSize {
  readonly clients: number;
  readonly computeNodes: number;
}

export type SwitchProgramName = 'forward' | 'fisslock' | 'netlock';

/** Client index reserved on every node for a protocol's node service (its mailbox and descriptor slot). */
export const SERVICE_CLIENT = 4095;

/**
 * The option a protocol lists in `options` when its clients stamp their run's epoch on requests
 * to a node service that outlives runs (the two-sided baselines' server in a live memory node).
 * The live driver sets it per run, above every earlier run's, so that service can tell runs apart.
 */
export const RUN_EPOCH_OPTION = 'runEpoch';

/** What a node service is started with: the ports of client SERVICE_CLIENT on its node, and the cluster's shape. */
export interface NodeServiceContext {
  readonly ports: ClientPorts;
  readonly memoryNodes: readonly NodeId[];
  readonly computeNodes: readonly NodeId[];
  /**
   * The incarnation of the process the service runs in: a memory node that restarted serves a new
   * one (the same number its verbs are bound by, `TableBinding`). Absent: 0.
   */
  readonly incarnation?: number;
  /**
   * Compute nodes the coordinator declared dead (FailureNotice), for services that recover what a
   * dead node held (lock servers). `onComputeNodeFailed` returns the unsubscribe. Absent: nobody
   * reports failures (a substrate without a coordinator).
   */
  readonly failures?: {
    onComputeNodeFailed(listener: (node: NodeId) => void): () => void;
    /** Compute nodes declared dead before the service started (a restarted service must not serve them). */
    readonly declared?: readonly NodeId[];
  };
}

export interface NodeService {
  /** Stops serving; pending work is abandoned (a crash looks the same from outside). */
  stop(): void | Promise<void>;
}

export interface ProtocolServices {
  /** Started once on every memory node for the length of a run (live: for the service's life). */
  memory?(context: NodeServiceContext, options?: ProtocolOptions): NodeService;
  /** Started once on every compute node for the length of a run, before any client. */
  compute?(context: NodeServiceContext, options?: ProtocolOptions): NodeService;
}

/** What a running switch says about its program (SwitchControl.Describe). */
export interface DescribedSwitchProgram {
  readonly policy: string;
  readonly lockCount: bigint | number;
}

/** What a simulated run hands a protocol's switch-program factory. */
export interface SwitchProgramInput {
  readonly options: ProtocolOptions;
  /** Locks in the run's workload (FissLock sizes its decider to them). */
  readonly workloadLocks: number;
  /** A pre-run trace of `samples` requests drawn from the run's own workload with its own seed. */
  sampleLockTrace(samples: number): readonly { readonly lock: LockId; readonly requester: string }[];
}
