import { OptionReader } from '@lockfabric/locks-common';
import type { ProtocolDefinition, ProtocolOptions } from '@lockfabric/locks-common';
import type { NodeId } from '@lockfabric/ports';
import { LockServer } from './lock-server.js';
import { ServerLockClient } from './server-lock-client.js';
import { currentHome } from './failover.js';
import type { LockHomes } from './failover.js';

export interface SrvLockOptions {
  readonly retransmitNs: number;
  readonly maxAttempts: number;
  readonly mutantReleaseAllHolders: boolean;
  readonly mutantServeDuringGrace: boolean;
  readonly mutantNoReclaimForward: boolean;
}

export const SRVLOCK_OPTION_HELP = {
  retransmitNs: 'resend an unanswered ACQUIRE/RELEASE after this many ns (default 5000000)',
  maxAttempts: 'RELEASE/cancel attempts before FabricAccessError (default 50)',
  mutantReleaseAllHolders: 'test-only: a release clears every holder of the lock (broken on purpose)',
  mutantServeDuringGrace: 'test-only: a new home serves a dead home\'s locks at once, without reclaiming the survivors\' holds (broken on purpose)',
  mutantNoReclaimForward: 'test-only: a release noted after the reclaim is not forwarded to the new home (leaves a phantom holder)',
};

export function readSrvLockOptions(options?: ProtocolOptions, protocol = 'srvlock'): SrvLockOptions {
  const reader = new OptionReader(protocol, options);
  const parsed: SrvLockOptions = {
    retransmitNs: reader.number('retransmitNs', 5_000_000, { min: 1_000 }),
    maxAttempts: reader.number('maxAttempts', 50, { min: 1, integer: true }),
    mutantReleaseAllHolders: reader.boolean('mutantReleaseAllHolders', false),
    mutantServeDuringGrace: reader.boolean('mutantServeDuringGrace', false),
    mutantNoReclaimForward: reader.boolean('mutantNoReclaimForward', false),
  };
  reader.done();
  return parsed;
}

/** The dedicated lock server: the lowest compute node id. */
export function srvLockServer(computeNodes: readonly NodeId[]): NodeId {
  if (computeNodes.length === 0) throw new RangeError('srvlock needs at least one compute node');
  return Math.min(...computeNodes);
}

/** SrvLock's homes: every lock on the server; a dead server's role moves to the next live compute node. */
export const SRVLOCK_HOMES: LockHomes = {
  baseHome: (_lock, computeNodes) => srvLockServer(computeNodes),
  isBaseHome: (node, computeNodes) => node === srvLockServer(computeNodes),
};

/**
 * SrvLock: one dedicated lock-server role (the lowest compute node) keeps every lock's holders and
 * FIFO queue; clients reach it with ACQUIRE/RELEASE packets through the switch's `forward` program.
 */
export const srvlock: ProtocolDefinition = {
  id: 'srvlock',
  // The lock server acts on the FailureNotice itself (within ms); it sends no report, so the book
  // counts the action done a small bound after detection.
  recovery: { compute: { mechanism: 'lease', boundMs: 10, action: 'the lock server drops the dead node\'s holds and queued requests on the FailureNotice, grants the survivors behind them, and ignores the dead node\'s later requests (fenced for the run); if the dead node was the server, the next live node takes over after a grace that reclaims the survivors\' holds' } },
  // The server fails over when its node dies; the switch path is assumed lossless (no loss or duplication).
  swarm: { nodeKill: true, memoryRestart: true, partitions: true, flushedVerbs: true, pauses: 'beyond-lease', switchFaults: 'delay' },
  summary: 'one dedicated lock server (lowest compute node): holders + FIFO queue per lock, over the forward program',
  fabric: 'switch',
  capabilities: ['send'],
  entryBytes: 8,
  modes: ['shared', 'exclusive'],
  options: SRVLOCK_OPTION_HELP,
  switchProgram: 'forward',
  services: {
    compute: (context, options) => {
      const parsed = readSrvLockOptions(options);
      return new LockServer(context, {
        managesLocks: context.ports.self.node === srvLockServer(context.computeNodes),
        mutantReleaseAllHolders: parsed.mutantReleaseAllHolders,
        failover: { ...SRVLOCK_HOMES, retransmitNs: parsed.retransmitNs, mutantServeDuringGrace: parsed.mutantServeDuringGrace, mutantNoReclaimForward: parsed.mutantNoReclaimForward },
      });
    },
  },
  createClient: (ports, options) => {
    const parsed = readSrvLockOptions(options);
    return new ServerLockClient(ports, {
      protocol: 'srvlock',
      retransmitNs: parsed.retransmitNs,
      retransmitAcquire: true,
      maxAttempts: parsed.maxAttempts,
      pushBackNs: 0,
      failover: true,
      route: (lock, nodes, _self, dead) => ({ kind: 'packet', dst: currentHome(SRVLOCK_HOMES, lock, nodes, dead) }),
    });
  },
};
