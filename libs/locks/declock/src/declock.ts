import type { ProtocolDefinition, ProtocolOptions } from '@lockfabric/locks-common';
import type { ClientPorts, Random } from '@lockfabric/ports';
import { createCqlContext } from './cql-context.js';
import { HierarchicalClient } from './hierarchical-client.js';
import { DeclockNodeService } from './node-service.js';
import { HIERARCHICAL_OPTION_HELP, readHierarchicalOptions } from './options.js';
import { capacityFor, entryBytesFor } from './table-layout.js';

/** The paper's default: capacity = number of compute nodes = 8. */
export const DECLOCK_DEFAULT_CAPACITY = 8;

export function createDeclockClient(ports: ClientPorts, options?: ProtocolOptions): HierarchicalClient {
  const parsed = readHierarchicalOptions('declock', options, ports.locks.entryBytes);
  const context = createCqlContext(ports, { protocol: 'declock', options: parsed, spareWord: true, withHints: true, contenders: 'compute-nodes' });
  return new HierarchicalClient(ports, parsed, 'declock', context);
}

/**
 * `declock` with room for `capacity` queue entries per lock: each lock-table entry is
 * 8 (header) + 8·C (queue) + 8 (spare word) bytes. The `capacity` option may pick any smaller
 * power of two; by default the client uses the largest capacity that fits the entry.
 */
export function declockProtocol(capacity = DECLOCK_DEFAULT_CAPACITY): ProtocolDefinition {
  return {
    id: 'declock',
    // A waiter that times out (acquireTimeoutNs 10 ms + stagger ≤ 15 ms) resets the lock, fenced by the
    // reset counter. The compute nodes' declock service hears the FailureNotice too: a reset stops
    // waiting for the dead node's queue members once every live node has acknowledged, and a reset the
    // dead node had claimed is taken over. So the action is done by the notice, or one waiter timeout
    // (+ an ack round trip) after it for a lock nobody waited on yet.
    recovery: { compute: { mechanism: 'lease', boundMs: 30, action: 'waiter timeout triggers a lock reset fenced by the reset counter; on the FailureNotice the reset stops waiting for the dead node (live nodes acknowledge with RESET_ACK) and a reset the dead node had claimed is taken over' } },
    // Dead nodes are marked through the failure feed and reset past; a restarted memory node's
    // locks are reset on each compute node before use (§4.6). A crashed client on a live node is
    // not recovered within the heal budget yet (left out until it is).
    swarm: { nodeKill: true, crashes: true, memoryRestart: true, partitions: true, flushedVerbs: true, pauses: 'beyond-lease', options: drawHandoff },
    summary: `DecLock: CQL queue-notify lock (FAA to enqueue, FAA+READ to release, grants CN to CN) under a timestamp-ordered per-node local lock; tf or pf (C ≤ ${capacity})`,
    fabric: 'verbs',
    capabilities: ['send'],
    entryBytes: entryBytesFor(capacity, true),
    modes: ['shared', 'exclusive'],
    options: HIERARCHICAL_OPTION_HELP,
    // Resets hear of dead compute nodes and collect RESET_ACKs through it (node-service.ts).
    services: {
      compute: (context, options) => {
        const parsed = readHierarchicalOptions('declock', options, context.ports.locks.entryBytes);
        return new DeclockNodeService(context, 'declock', parsed.capacity, parsed.mutantNoTableReset);
      },
    },
    createClient: createDeclockClient,
    lockResets: true,
    // One queue entry per contending compute node (DecLock §4): more than 8 nodes need a larger C (Fig. 15).
    sizedFor: (workload, options) => {
      return declockProtocol(capacityFor(options?.['capacity'], workload.computeNodes, capacity));
    },
  };
}

export const declock: ProtocolDefinition = declockProtocol();

/**
 * Options a swarm seed draws for declock: one of DecLock's local policies (Fig. 14: TS-TF, TS-PF,
 * Remote-Prefer, Local-Prefer, Local-Bound(k)), and a 2 ms suspicion of queue members that do not
 * move — longer than any pause the swarm draws — so a crashed client's hold is reset past
 * (decision 0005; the paper assumes critical sections end within a finite time).
 */
function drawHandoff(random: Random): ProtocolOptions {
  const pick = random.int(5);
  const policy: ProtocolOptions[] = [{ handoff: 'timestamp', policy: 'tf' }, { handoff: 'timestamp', policy: 'pf' }, { handoff: 'remote-prefer' }, { handoff: 'local-prefer' }, { handoff: 'local-bound', localBound: 1 + random.int(4) }];
  return { suspectAfterNs: 2_000_000, ...policy[pick] };
}
