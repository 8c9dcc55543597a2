import type { ProtocolDefinition, ProtocolOptions } from '@lockfabric/locks-common';
import type { ClientPorts } from '@lockfabric/ports';
import { CQL_OPTION_HELP, DeclockNodeService, capacityFor, createCqlContext, entryBytesFor, readCqlOptions } from '@lockfabric/lock-declock';
import { FlatCqlClient } from './flat-client.js';

/**
 * Flat CQL needs C ≥ the clients that can contend for one lock; 32 covers the test workloads, and
 * `sizedFor` raises it to the run's client count (256 clients: C = 256) on sim and embedded.
 */
export const DECLOCK_CQL_DEFAULT_CAPACITY = 32;

export function createDeclockCqlClient(ports: ClientPorts, options?: ProtocolOptions): FlatCqlClient {
  const parsed = readCqlOptions('declock-cql', options, ports.locks.entryBytes);
  const context = createCqlContext(ports, { protocol: 'declock-cql', options: parsed, spareWord: false, withHints: false, contenders: 'clients' });
  return new FlatCqlClient(ports, parsed, 'declock-cql', context);
}

/** `declock-cql` whose lock entries (8 + 8·C bytes) hold up to `capacity` queue entries. */
export function declockCqlProtocol(capacity = DECLOCK_CQL_DEFAULT_CAPACITY): ProtocolDefinition {
  return {
    id: 'declock-cql',
    recovery: { compute: { mechanism: 'lease', boundMs: 30, action: 'as declock' } },
    // Dead nodes are reset past. A crashed client on a live node is never suspected by default
    // (suspectAfterNs = inf); the swarm runs crashes with a 2 ms suspicion, longer than any pause
    // it draws, since a member declared failed while merely slow would still hold (decision 0005).
    swarm: { nodeKill: true, crashes: true, memoryRestart: true, partitions: true, flushedVerbs: true, pauses: 'beyond-lease', options: () => ({ suspectAfterNs: 2_000_000 }) },
    summary: `DecLock's flat CQL lock: 8-byte FAA header + ring of C entries on the memory node, grants CN to CN, task-fair (C ≤ ${capacity})`,
    fabric: 'verbs',
    capabilities: ['send'],
    entryBytes: entryBytesFor(capacity, false),
    modes: ['shared', 'exclusive'],
    options: CQL_OPTION_HELP,
    // Resets hear of dead compute nodes and collect RESET_ACKs through it (lock-declock node-service.ts).
    services: {
      compute: (context, options) => {
        const parsed = readCqlOptions('declock-cql', options, context.ports.locks.entryBytes);
        return new DeclockNodeService(context, 'declock-cql', parsed.capacity, parsed.mutantNoTableReset);
      },
    },
    createClient: createDeclockCqlClient,
    lockResets: true,
    sizedFor: (workload, options) => declockCqlProtocol(capacityFor(options?.['capacity'], workload.clients, capacity)),
  };
}

export const declockCql: ProtocolDefinition = declockCqlProtocol();
