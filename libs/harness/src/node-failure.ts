import type { NodeId, ClientPorts, Verbs } from '@lockfabric/ports';

/**
 * Fault of an in-memory run: one compute node fails like a SIGKILL. It stops heartbeating; the
 * coordinator's control plane (libs/control, run over the sim's in-memory bus) detects the
 * silence, publishes the FailureNotice and runs the recovery drivers, and node services hear of
 * it through their failure feed (harness/src/control).
 */
export interface NodeFailureSpec {
  /** Which compute node fails: an index into the cluster's compute nodes. */
  readonly computeNode: number;
  /** When it fails, from the run's start. */
  readonly atMs: number;
  /**
   * The failure detector's suspicion timeout: heartbeats every `detectionMs / missesBeforeSuspect`,
   * a member suspected (and, with no confirmation delay, declared dead) after `detectionMs` of
   * silence. Node services hear of the death between `detectionMs - interval` and
   * `detectionMs + tick` after the failure (plus control-message latency). Default 2 ms.
   */
  readonly detectionMs?: number;
  /** Missed heartbeat intervals before suspicion; default 2. */
  readonly missesBeforeSuspect?: number;
}

/**
 * Fault of an in-memory run: the coordinator process crashes at `atMs` (its state is dropped:
 * failure detector, epochs, recovery book, recovery drivers in flight, and its control messages in
 * flight) and a new instance with empty state starts `downMs` later, warms up for one suspicion
 * timeout, and carries on. Nodes keep heartbeating meanwhile.
 */
export interface CoordinatorCrashSpec {
  /** When the coordinator crashes, from the run's start. */
  readonly atMs: number;
  /** How long it stays down before the new instance starts. */
  readonly downMs: number;
  /**
   * Test only: the new instance skips the queue-lock repair a restarted coordinator runs
   * (QueueRecoveryHook.afterRestart), so a recovery the crash cut short is never finished.
   */
  readonly mutantSkipRestartRecovery?: boolean;
  /**
   * Test only: the new instance does not watch the run's compute nodes it has not heard, so a node
   * that died before any view listed it is never declared dead (libs/control Membership `expected`).
   */
  readonly mutantIgnoreExpectedMembers?: boolean;
}

/**
 * Fault of an in-memory run: memory node `memoryNode` (default the first) dies like a SIGKILL at
 * `atMs` and a fresh process starts `downMs` later with every region zeroed, under a new
 * incarnation. Meanwhile its verbs fail `unreachable` (FABRIC_ACCESS); afterwards a client's verbs
 * still pinned to the old incarnation are refused, so a release for a hold on the lost table ends
 * TABLE_LOST instead of freeing a lock on the new one. The memory node's protocol service restarts too.
 */
export interface MemoryRestartSpec {
  readonly atMs: number;
  readonly downMs: number;
  readonly memoryNode?: number;
  /** Test only: clients are not pinned to incarnations, so a release meant for the lost table frees a lock on the new one. */
  readonly mutantUnfenced?: boolean;
}

/** What the memory-node restart did, clock of the run. */
export interface MemoryRestartOutcome {
  readonly node: NodeId;
  readonly crashedAtNs: number;
  readonly restartedAtNs: number;
  readonly incarnation: number;
}

/** What happened: the node, and when it failed and was reported (clock of the run). */
export interface NodeFailureOutcome {
  readonly node: NodeId;
  readonly failedAtNs: number;
  readonly reportedAtNs: number;
}

/**
 * A failure feed a test fires by hand (`NodeServiceContext.failures`), for rigs that exercise node
 * services without a control plane (switch-net.ts, the declock kill rig). `runInMemory` runs the
 * real control plane instead (harness/src/control).
 */
export class FailureHub {
  private readonly listeners = new Set<(node: NodeId) => void>();

  onComputeNodeFailed(listener: (node: NodeId) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Tells every listener that `node` was declared dead. */
  fire(node: NodeId): void {
    for (const listener of [...this.listeners]) listener(node);
  }
}

/** Verbs of a process that may die: once `isDead()` holds, a verb is never posted and never completes. */
function severableVerbs(verbs: Verbs, isDead: () => boolean): Verbs {
  const never = new Promise<never>(() => undefined);
  const cut =
    <A extends unknown[], R>(verb: (...args: A) => Promise<R>) =>
    (...args: A): Promise<R> =>
      isDead() ? never : verb(...args);
  return {
    post: cut(verbs.post.bind(verbs)),
    read: cut(verbs.read.bind(verbs)),
    write: cut(verbs.write.bind(verbs)),
    cas: cut(verbs.cas.bind(verbs)),
    faa: cut(verbs.faa.bind(verbs)),
    maskedCas: cut(verbs.maskedCas.bind(verbs)),
    maskedFaa: cut(verbs.maskedFaa.bind(verbs)),
    isLocal: (addr) => verbs.isLocal(addr),
    cpu: verbs.cpu,
  };
}

/**
 * A client's ports that go silent once `isDead()` holds: nothing it sends leaves its node any more
 * (verbs, switch packets, messages), as after a SIGKILL — in particular a hold the dead client's
 * loop would still release is never released. Inbound traffic still reaches the (dead) client's
 * code, which the run ignores from then on.
 */
export function severablePorts(ports: ClientPorts, isDead: () => boolean): ClientPorts {
  const { switchPort, mailbox } = ports;
  return {
    ...ports,
    // Switch-only rigs hand over ports without verbs.
    ...(ports.verbs ? { verbs: severableVerbs(ports.verbs, isDead) } : {}),
    mailbox: {
      self: mailbox.self,
      send: (message) => {
        if (!isDead()) mailbox.send(message);
      },
      receive: (match, options) => mailbox.receive(match, options),
    },
    ...(switchPort
      ? {
          switchPort: {
            machine: switchPort.machine,
            send: (packet) => {
              if (!isDead()) switchPort.send(packet);
            },
            onPacket: (handler) => switchPort.onPacket(handler),
          },
        }
      : {}),
  };
}
