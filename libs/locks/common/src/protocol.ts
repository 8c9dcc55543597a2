import type { ClientPorts, LockClient, LockMode, NicCapability, ProtocolId } from '@lockfabric/ports';

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
  createClient(ports: ClientPorts, options?: ProtocolOptions): LockClient;
}
