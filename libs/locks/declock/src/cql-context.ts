import { ConfigError, lockAddress } from '@lockfabric/ports';
import type { ClientAddress, ClientPorts } from '@lockfabric/ports';
import { allComputeNodes, computeNodeEntries, perComputeNode } from './cn-registry.js';
import { ClientInbox, CnSignals } from './cn-signals.js';
import { CqlEngine } from './cql-engine.js';
import { assertEncodableClient } from './entry.js';
import { HeaderLayout, RESET_ID_BITS } from './header.js';
import type { CqlOptions } from './options.js';
import { CqlTable } from './table-layout.js';

export interface CqlContextConfig {
  readonly protocol: string;
  readonly options: CqlOptions;
  /** Hierarchical declock keeps a spare word per lock (lock 0's is the clock-sync counter). */
  readonly spareWord: boolean;
  readonly withHints: boolean;
  /** What contends for one header: every client (flat CQL) or one owner per compute node. */
  readonly contenders: 'clients' | 'compute-nodes';
}

export interface CqlContext {
  readonly header: HeaderLayout;
  readonly table: CqlTable;
  readonly signals: CnSignals;
  readonly engine: CqlEngine;
  /** Key under which this configuration's per-node state is registered. */
  readonly scopeKey: string;
}

/**
 * Builds one client's CQL machinery and joins it to its compute node's shared state. Refuses
 * configurations the header cannot carry (spec §7.17): more contenders than C (or than 2C−1 with
 * `allowQueueOverflow`), as far as this process can see them.
 */
export function createCqlContext(ports: ClientPorts, config: CqlContextConfig): CqlContext {
  const { options } = config;
  const header = new HeaderLayout(options.capacity);
  const table = new CqlTable(ports.locks, options.capacity, config.spareWord);
  assertEncodableClient(ports.self);
  if (ports.self.node + 1 >= 2 ** RESET_ID_BITS) {
    throw new ConfigError([`${config.protocol}: node ${ports.self.node} has no ${RESET_ID_BITS}-bit reset id (nodes 0..${2 ** RESET_ID_BITS - 2})`]);
  }
  const scopeKey = `${config.protocol}/C${options.capacity}`;
  const members = perComputeNode(ports.locks, `${scopeKey}/members`, ports.self.node, () => new Set<number>());
  members.add(ports.self.client);
  const all = allComputeNodes<Set<number>>(ports.locks, `${scopeKey}/members`);
  const contenders = config.contenders === 'clients' ? all.reduce((n, set) => n + set.size, 0) : all.length;
  const limit = options.allowQueueOverflow ? 2 * options.capacity - 1 : options.capacity;
  if (contenders > limit) {
    members.delete(ports.self.client);
    throw new ConfigError([
      `${config.protocol}: ${contenders} ${config.contenders} can contend for one lock but capacity ${options.capacity} allows ${limit}` +
        (options.allowQueueOverflow ? ' (past 2C−1 qsize spills into qhead)' : ' (raise capacity, or allowQueueOverflow=true to let overflow resets handle up to 2C−1)'),
    ]);
  }
  const signals = perComputeNode(ports.locks, `${scopeKey}/signals`, ports.self.node, () => new CnSignals(ports.self.node, header.epochBits, (lock) => lockAddress(ports.locks, lock).node));
  const inbox = new ClientInbox(ports.mailbox, signals);
  // RESET goes to every client this process knows (all of them under sim and embedded).
  const peers = (): ClientAddress[] =>
    computeNodeEntries<Set<number>>(ports.locks, `${scopeKey}/members`).flatMap(([node, clients]) => [...clients].map((client) => ({ node, client })));
  const engine = new CqlEngine(ports, header, table, signals, inbox, options, config.protocol, config.withHints, peers);
  return { header, table, signals, engine, scopeKey };
}
