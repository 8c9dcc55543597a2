import { OptionReader, RUN_EPOCH_OPTION, SERVICE_CLIENT } from '@lockfabric/locks-common';
import type { ProtocolDefinition, ProtocolOptions, ProtocolRecovery } from '@lockfabric/locks-common';
import { lockAddress } from '@lockfabric/ports';
import type { ProtocolId } from '@lockfabric/ports';
import { LockServer } from './lock-server.js';
import { ServerLockClient } from './server-lock-client.js';

/**
 * The two-sided baselines (`rpc`, `traditional`, `traditional-ro`): a lock manager on the CPU of
 * each memory node, for the locks homed there, reached by SEND/RECV (mailbox messages to the
 * node's service, client index SERVICE_CLIENT). The manager is a {@link LockServer} whose
 * requests queue for a modelled server CPU; only its lock discipline differs per protocol. On live
 * it lives as long as the memory node, across runs: clients stamp their run's epoch (`runEpoch`).
 * A compute node's death (sim: the FailureNotice; live: the memory node's fence of it) drops the
 * dead node's holds and queued requests and fences it for the rest of the run. A memory node's
 * restart starts the server empty under the node's new incarnation, which every reply carries: a
 * client refuses a grant of the lost table, and a hold granted there ends TABLE_LOST on release.
 */
export interface MemoryServerOptions {
  readonly cpuNs: number;
  readonly threads: number;
  readonly queueBound: number;
  readonly retransmitNs: number;
  readonly maxAttempts: number;
  readonly backoffNs: number;
  readonly backoffCapNs: number;
  readonly mutantReleaseAllHolders: boolean;
  readonly mutantUnboundedBypass: boolean;
  readonly mutantKeepDeadHolds: boolean;
  /** Test-only: a restarted server serves the nodes declared dead before it started. */
  readonly mutantForgetDeadOnStart: boolean;
  /** Test-only: clients ignore the server incarnation on replies, so holds on a restarted server's lost table look held. */
  readonly mutantIgnoreServerRestart: boolean;
  /** This run's epoch, stamped on the clients' requests (0: none; the live driver sets one per run). */
  readonly runEpoch: number;
}

export interface MemoryServerDesign {
  readonly id: ProtocolId;
  readonly summary: string;
  /** What becomes of a dead compute node's holds (the design's own rule: live keeps them, sim drops them). */
  readonly recovery: ProtocolRecovery;
  /** Distinguishes this protocol's requests in the memory node's shared service mailbox (1…255). */
  readonly tag: number;
  /** Retry-on-fail: a conflicting try is answered busy and retried after a random backoff. */
  readonly tryOnly: boolean;
  /** Reader reordering bound (Traditional_RO); absent: strict FIFO. */
  readonly readerBypass?: number;
  /** Default server threads per memory node. */
  readonly threads: number;
  /** Default first retry backoff bound after `busy` (try-only); it doubles per retry up to `backoffCapNs`. */
  readonly backoffNs: number;
  readonly backoffCapNs: number;
}

/**
 * Default CPU time per request: an assumption, not a measurement — about 1 µs for one server
 * thread to poll a RECV, update the lock table and post the reply SEND (a few hundred ns of NIC
 * work plus cache misses on the table), i.e. ≈1 M requests/s per thread.
 */
export const DEFAULT_REQUEST_CPU_NS = 1_000;

export function memoryServerOptionHelp(design: MemoryServerDesign): Record<string, string> {
  return {
    cpuNs: `modelled server CPU time per request, ns (default ${DEFAULT_REQUEST_CPU_NS}; 0 = none)`,
    threads: `server threads per memory node (default ${design.threads})`,
    queueBound: 'requests waiting for a server thread before new ones are dropped (default 1024)',
    retransmitNs: 'resend an unanswered request after this many ns (default 5000000)',
    maxAttempts: 'RELEASE/cancel attempts before FabricAccessError (default 50)',
    [RUN_EPOCH_OPTION]: "the run's epoch on every request, so a server that outlives runs tells them apart (set per run by the live driver; default 0: none)",
    ...(design.tryOnly
      ? {
          backoffNs: `first random retry backoff bound after a busy answer, ns; doubles per retry (default ${design.backoffNs})`,
          backoffCapNs: `cap of the retry backoff bound, ns (default ${design.backoffCapNs})`,
        }
      : {}),
    mutantReleaseAllHolders: 'test-only: a release clears every holder of the lock (broken on purpose)',
    mutantKeepDeadHolds: "test-only: a compute node's death fences it but keeps its holds and queued requests (its locks stay held)",
    mutantForgetDeadOnStart: "test-only: a memory node's restarted server serves compute nodes declared dead before it started (their waiting requests get grants nobody releases)",
    mutantIgnoreServerRestart: "test-only: clients ignore the server incarnation on replies, so a hold on a restarted memory node's lost table still looks held (broken on purpose)",
    ...(design.readerBypass !== undefined ? { mutantUnboundedBypass: 'test-only: readers pass waiting writers without bound (writers starve)' } : {}),
  };
}

export function readMemoryServerOptions(design: MemoryServerDesign, options?: ProtocolOptions): MemoryServerOptions {
  const reader = new OptionReader(design.id, options);
  const parsed: MemoryServerOptions = {
    cpuNs: reader.number('cpuNs', DEFAULT_REQUEST_CPU_NS, { min: 0 }),
    threads: reader.number('threads', design.threads, { min: 1, max: 1024, integer: true }),
    queueBound: reader.number('queueBound', 1024, { min: 1, max: 1 << 20, integer: true }),
    retransmitNs: reader.number('retransmitNs', 5_000_000, { min: 1_000 }),
    maxAttempts: reader.number('maxAttempts', 50, { min: 1, integer: true }),
    backoffNs: design.tryOnly ? reader.number('backoffNs', design.backoffNs, { min: 0, integer: true }) : 0,
    backoffCapNs: design.tryOnly ? reader.number('backoffCapNs', design.backoffCapNs, { min: 0, integer: true }) : 0,
    mutantReleaseAllHolders: reader.boolean('mutantReleaseAllHolders', false),
    mutantUnboundedBypass: design.readerBypass !== undefined ? reader.boolean('mutantUnboundedBypass', false) : false,
    mutantKeepDeadHolds: reader.boolean('mutantKeepDeadHolds', false),
    mutantForgetDeadOnStart: reader.boolean('mutantForgetDeadOnStart', false),
    mutantIgnoreServerRestart: reader.boolean('mutantIgnoreServerRestart', false),
    runEpoch: reader.number(RUN_EPOCH_OPTION, 0, { min: 0, max: Number.MAX_SAFE_INTEGER, integer: true }),
  };
  reader.done();
  return parsed;
}

export function memoryServerProtocol(design: MemoryServerDesign): ProtocolDefinition {
  return {
    id: design.id,
    summary: design.summary,
    recovery: design.recovery,
    // Compute nodes die and pause; a dead node's holds are dropped on its failure notice. A memory
    // node's restart loses its table: the replies' incarnation tells the clients (see above).
    swarm: { nodeKill: true, pauses: 'beyond-lease', memoryRestart: true, partitions: true, flushedVerbs: true },
    fabric: 'verbs',
    capabilities: ['send'],
    entryBytes: 8,
    modes: ['shared', 'exclusive'],
    options: memoryServerOptionHelp(design),
    memoryServiceOptions: ['cpuNs', 'threads', 'queueBound', 'mutantReleaseAllHolders', 'mutantKeepDeadHolds', 'mutantForgetDeadOnStart', ...(design.readerBypass !== undefined ? ['mutantUnboundedBypass'] : [])],
    services: {
      memory: (context, options) => {
        const parsed = readMemoryServerOptions(design, options);
        return new LockServer(context, {
          managesLocks: true,
          tryOnly: design.tryOnly,
          accepts: (m) => m.data?.[2] === design.tag && m.to.client === SERVICE_CLIENT,
          cpu: { requestNs: parsed.cpuNs, threads: parsed.threads, queueBound: parsed.queueBound },
          mutantReleaseAllHolders: parsed.mutantReleaseAllHolders,
          mutantKeepDeadHolds: parsed.mutantKeepDeadHolds,
          incarnation: context.incarnation ?? 0,
          fenceDeclaredAtStart: true,
          mutantForgetDeadOnStart: parsed.mutantForgetDeadOnStart,
          ...(design.readerBypass !== undefined ? { readerBypass: design.readerBypass, mutantUnboundedBypass: parsed.mutantUnboundedBypass } : {}),
        });
      },
    },
    createClient: (ports, options) => {
      const parsed = readMemoryServerOptions(design, options);
      return new ServerLockClient(ports, {
        protocol: design.id,
        retransmitNs: parsed.retransmitNs,
        retransmitAcquire: true,
        maxAttempts: parsed.maxAttempts,
        pushBackNs: parsed.backoffNs,
        pushBackCapNs: parsed.backoffCapNs,
        needsTopology: false,
        serviceTag: design.tag,
        runEpoch: parsed.runEpoch,
        serverIncarnations: !parsed.mutantIgnoreServerRestart,
        route: (lock) => ({ kind: 'local', node: lockAddress(ports.locks, lock).node }),
      });
    },
  };
}
