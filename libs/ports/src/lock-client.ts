import type { Clock, Random } from './clock.js';
import type { ClientAddress, LockId, LockMode, NodeId } from './ids.js';
import type { Mailbox } from './mailbox.js';
import type { PhaseMarks } from './phases.js';
import type { SwitchPort } from './switch-port.js';
import type { Trace } from './trace.js';
import type { LockTableLayout, RemoteAddr, Verbs } from './verbs.js';

/**
 * Per-client descriptor slots (queue nodes of MCS-style locks): a fixed-size slot on each client's
 * own node that peers reach with verbs, and that the owner reads with CPU loads (`verbs.cpu`).
 */
export interface DescriptorDirectory {
  readonly slotBytes: number;
  /** This client's own slot (on its own node; zeroed when the substrate starts). */
  readonly self: RemoteAddr;
  /** The slot of any client, on that client's node. */
  of(client: ClientAddress): RemoteAddr;
}

/** Everything a protocol client may touch: the ports of one client, and where the locks are. */
export interface ClientPorts {
  readonly self: ClientAddress;
  readonly verbs: Verbs;
  readonly mailbox: Mailbox;
  readonly switchPort?: SwitchPort;
  readonly clock: Clock;
  readonly random: Random;
  readonly trace: Trace;
  readonly locks: LockTableLayout;
  readonly descriptors: DescriptorDirectory;
  /** Which memory-node incarnations this client's verbs may reach; absent where nodes never restart (sim, embedded). */
  readonly tables?: TableBinding;
  /** Where the protocol marks the phases of each operation (latency breakdown); absent when nobody times them. */
  readonly phases?: PhaseMarks;
}

/**
 * Binds a client's verbs to the memory nodes' lock tables as they are now. A memory node that
 * restarts comes back with an empty table under a new incarnation; a client's verbs must never mix
 * the two: a release meant for a hold on the lost table would free whoever holds the lock on the
 * new one. The workload loop calls `follow` whenever its client holds nothing.
 */
export interface TableBinding {
  /** From now on the client's verbs go to the incarnations the memory nodes serve now. */
  follow(): void;
  /** True when a memory node this client is bound to now serves another incarnation (its table was lost). */
  lost(): boolean;
  /**
   * Waits, at most `maxWaitMs`, until every memory node this client is bound to is reachable
   * again, then says whether its table was lost meanwhile.
   */
  settle(maxWaitMs: number): Promise<boolean>;
  /**
   * The incarnation of each memory node this client's verbs are pinned to (a later one is a
   * restarted table). Optional: a protocol that keeps per-node state about the tables (DecLock's
   * reset counters) compares them to learn of a restart before it uses that state.
   */
  incarnations?(): ReadonlyMap<NodeId, number>;
}

export interface AcquireOptions {
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
}

/** Proof of holding a lock; protocols extend it with what their release needs. */
export interface Grant {
  readonly lock: LockId;
  readonly mode: LockMode;
}

/** What every protocol offers a client. */
export interface LockClient<G extends Grant = Grant> {
  acquire(lock: LockId, mode: LockMode, options?: AcquireOptions): Promise<G>;
  release(grant: G): Promise<void>;
}
