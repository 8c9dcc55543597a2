import type { ProtocolDefinition, ProtocolOptions } from '@lockfabric/locks-common';
import { LockServer, ServerLockClient, currentHome, readSrvLockOptions } from '@lockfabric/lock-srvlock';
import type { LockHomes, LockRoute } from '@lockfabric/lock-srvlock';
import type { LockId, NodeId } from '@lockfabric/ports';
import { OptionReader } from '@lockfabric/locks-common';

export const PARLOCK_OPTION_HELP = {
  retransmitNs: 'resend an unanswered ACQUIRE/RELEASE after this many ns (default 5000000)',
  maxAttempts: 'RELEASE/cancel attempts before FabricAccessError (default 50)',
  mutantReleaseAllHolders: 'test-only: a release clears every holder of the lock (broken on purpose)',
  mutantAlwaysLocal: 'test-only: every client treats its own node as the home of every lock (broken on purpose)',
  mutantServeDuringGrace: 'test-only: a new home serves a dead home\'s locks at once, without reclaiming the survivors\' holds (broken on purpose)',
  mutantNoReclaimForward: 'test-only: a release noted after the reclaim is not forwarded to the new home (leaves a phantom holder)',
};

/** A lock's home: compute nodes in the order the cluster lists them, `lock mod n`. */
export function parLockHome(lock: LockId, computeNodes: readonly NodeId[]): NodeId {
  const home = computeNodes[lock % computeNodes.length];
  if (home === undefined) throw new RangeError('parlock needs at least one compute node');
  return home;
}

/** ParLock's homes: `lock mod n`; a dead node's locks move to the next live compute node in the cluster's order. */
export const PARLOCK_HOMES: LockHomes = {
  baseHome: parLockHome,
  isBaseHome: (node, computeNodes) => computeNodes.includes(node),
};

function readParLockOptions(options?: ProtocolOptions) {
  const { mutantAlwaysLocal, ...rest } = options ?? {};
  const reader = new OptionReader('parlock', mutantAlwaysLocal === undefined ? {} : { mutantAlwaysLocal });
  const alwaysLocal = reader.boolean('mutantAlwaysLocal', false);
  reader.done();
  return { ...readSrvLockOptions(rest, 'parlock'), mutantAlwaysLocal: alwaysLocal };
}

/**
 * ParLock: every compute node runs a lock manager for the locks homed on it (`lock mod n`).
 * A client whose own node is the home asks its node's manager directly (node-local message, no
 * switch packet); the others send ACQUIRE/RELEASE packets to the home through the forward program.
 */
export const parlock: ProtocolDefinition = {
  id: 'parlock',
  // As srvlock: the managers act on the FailureNotice and send no report.
  recovery: { compute: { mechanism: 'lease', boundMs: 10, action: 'every surviving partition manager drops the dead node\'s holds and queued requests on the FailureNotice and fences it, as srvlock; locks homed on the dead node move to the next live node, which serves them after a grace that reclaims the survivors\' holds' } },
  // The home of a dead node's locks moves to the next live node after a reclaim round.
  swarm: { nodeKill: true, memoryRestart: true, partitions: true, flushedVerbs: true, pauses: 'beyond-lease', switchFaults: 'delay' },
  summary: 'lock managers partitioned across compute nodes by lock home (lock mod n); local grants without packets',
  fabric: 'switch',
  capabilities: ['send'],
  entryBytes: 8,
  modes: ['shared', 'exclusive'],
  options: PARLOCK_OPTION_HELP,
  switchProgram: 'forward',
  services: {
    compute: (context, options) => {
      const parsed = readParLockOptions(options);
      return new LockServer(context, {
        managesLocks: true,
        mutantReleaseAllHolders: parsed.mutantReleaseAllHolders,
        // The always-local mutant keeps managers that serve whatever reaches them (no failover), so its overlap shows.
        ...(parsed.mutantAlwaysLocal ? {} : { failover: { ...PARLOCK_HOMES, retransmitNs: parsed.retransmitNs, mutantServeDuringGrace: parsed.mutantServeDuringGrace, mutantNoReclaimForward: parsed.mutantNoReclaimForward } }),
      });
    },
  },
  createClient: (ports, options) => {
    const parsed = readParLockOptions(options);
    return new ServerLockClient(ports, {
      protocol: 'parlock',
      retransmitNs: parsed.retransmitNs,
      retransmitAcquire: true,
      maxAttempts: parsed.maxAttempts,
      pushBackNs: 0,
      failover: true,
      route: (lock, nodes, self, dead): LockRoute => {
        const home = parsed.mutantAlwaysLocal ? self : currentHome(PARLOCK_HOMES, lock, nodes, dead);
        return home === self ? { kind: 'local' } : { kind: 'packet', dst: home };
      },
    });
  },
};
