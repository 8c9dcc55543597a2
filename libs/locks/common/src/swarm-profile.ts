import type { NodeId, Random } from '@lockfabric/ports';
import type { SwitchProgram } from '@lockfabric/switch';
import type { NodeService, ProtocolOptions } from './protocol.js';

/**
 * The faults a protocol is swarm-tested with (`lockfabric check --swarm`): only those its design
 * claims to survive. Every seed also perturbs the schedule (jitter) and ends with a heal phase in
 * which every lock must be acquirable again. A protocol gets swarm testing by declaring this.
 */
export interface SwarmProfile {
  /** Clients crash instead of releasing: needs leases, timeouts or queue repair to stay live. */
  readonly crashes?: boolean;
  /** A compute node dies mid-run (its clients and node service) and is declared dead after a detection delay. */
  readonly nodeKill?: boolean;
  /**
   * Process pauses of one compute node (its clients stop; verbs already posted still land):
   * `short` stays well under every timeout; `beyond-lease` outlasts the protocol's lease, so
   * lease fencing must keep exclusion.
   */
  readonly pauses?: 'short' | 'beyond-lease';
  /** Switch packet faults on either link: `lossy` (loss, duplication, reordering, delay) or `delay` (reordering and delay only). */
  readonly switchFaults?: 'lossy' | 'delay';
  /**
   * The memory node restarts mid-run and comes back with an empty lock table under a new
   * incarnation: holds on the lost table end (TABLE_LOST), clients back off and rebind.
   */
  readonly memoryRestart?: boolean;
  /**
   * One compute node is cut off from the network (memory nodes, switch, peers, coordinator) for
   * 20 µs up to 0.8 of the failure detector's timeout, then healed; its process keeps running.
   * Verbs and messages wait for the heal, switch packets are lost.
   */
  readonly partitions?: boolean;
  /**
   * Lost completions: a compute node's queue pairs break (at drawn instants, and at the start of
   * each cut), and every verb in flight completes `unreachable` whether or not the memory node ran
   * it, as a live queue pair flushes when its stream breaks. A failed verb may have run.
   */
  readonly flushedVerbs?: boolean;
  /** Some clients (up to half) run on the memory node itself, beside the lock words (ALock's local cohort). */
  readonly colocatedClients?: boolean;
  /**
   * Largest clock offset between two nodes the protocol tolerates with the options it runs with
   * (DrTM's Δ); nodes get offsets up to ±half of it. Clock rates drift up to ±50 ppm for every
   * protocol (half the 10^-4 bound the papers assume). Default 0: synchronised offsets.
   */
  readonly clockSkewNs?: number;
  /** Protocol options drawn per seed (short leases so that recovery happens within a small run, say). */
  options?(random: Random): ProtocolOptions;
  /**
   * The protocol's own invariants over its node services' state, which no history shows (FissLock:
   * one agent per lock, the agent's mode is the decider's). The swarm runner calls it once per seed,
   * after the heal probe, while the services still run; each line returned is a safety failure.
   */
  invariants?(end: SwarmEndView): Promise<readonly string[]>;
  /** Virtual time after healing within which every lock must be acquired again; default 50 ms. */
  readonly healBudgetMs?: number;
}

/** What a protocol's swarm invariants can read at the end of a seed (simulated runs only). */
export interface SwarmEndView {
  /** The node service of each compute node still alive, by node id (a killed node's is gone). */
  readonly computeServices: ReadonlyMap<NodeId, NodeService>;
  /** The run's switch program, when it has one switch. */
  readonly switchProgram?: SwitchProgram;
  /** Runs the simulation on for `ns` of virtual time (faults are healed by then), so that resends settle. */
  settle(ns: number): Promise<void>;
}
