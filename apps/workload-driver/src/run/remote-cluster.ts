import { ConfigError } from '@lockfabric/ports';
import type { ProcessRecord } from '../cluster/local-cluster.js';

/**
 * A cluster that runs elsewhere (Kubernetes, compose): the driver reaches its compute nodes and
 * memory nodes by address instead of reading a local cluster.json. Each record carries the host
 * the ports belong to; {@link addressOf} is how the live runner builds addresses from records.
 * Discovery (asking the nodes who they are) is remote-discovery.ts.
 */
export interface HostPort {
  readonly host: string;
  readonly port: number;
}

export type RemoteRecord = ProcessRecord & {
  readonly host: string;
  /**
   * Why the node could not be asked its machine id at discovery (down, or silent to Describe).
   * Its `node` is then a stand-in (negative): it counts as down for every run of this state, even
   * if it comes back, since a run under a wrong id would mix up its peers.
   */
  readonly downAtDiscovery?: string;
};

const HOST_PORT = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?):(\d{1,5})$/;

/** `host:port,host:port` → addresses; every malformed entry is reported under the flag's name. */
export function parseAddressList(flag: string, value: string): HostPort[] {
  const { out, problems } = readAddressList(flag, value);
  if (problems.length > 0) throw new ConfigError(problems);
  return out;
}

/** The problems of an address-list flag, for a command that lists every flag's problems at once. */
export function addressListProblems(flag: string, value: unknown): string[] {
  return typeof value === 'string' ? readAddressList(flag, value).problems : [];
}

function readAddressList(flag: string, value: string): { out: HostPort[]; problems: string[] } {
  const problems: string[] = [];
  const out: HostPort[] = [];
  for (const part of value.split(',').map((s) => s.trim()).filter((s) => s !== '')) {
    const match = HOST_PORT.exec(part);
    const port = Number(match?.[2]);
    if (!match || port < 1 || port > 65535) problems.push(`--${flag}: expected host:port with a port 1-65535, got '${part}'`);
    else out.push({ host: match[1]!, port });
  }
  if (out.length === 0 && problems.length === 0) problems.push(`--${flag}: expected at least one host:port`);
  return { out, problems };
}

/** `host:port` of a record's port: its own host for remote records, loopback for local ones. */
export function addressOf(record: ProcessRecord, port: number | undefined): string {
  const host = (record as Partial<RemoteRecord>).host ?? '127.0.0.1';
  return `${host}:${port ?? 0}`;
}

/** Why discovery could not ask this node its id (see RemoteRecord.downAtDiscovery); undefined for every other record. */
export function downAtDiscovery(record: ProcessRecord): string | undefined {
  return (record as Partial<RemoteRecord>).downAtDiscovery;
}

/** A remote node's record; the name says its role and id, or its address while the id is unknown. */
export function remoteRecord(role: 'memory' | 'compute', node: number | undefined, at: HostPort, ports: { grpc: number; memoryGrpc?: number }, index: number): RemoteRecord {
  const name = node === undefined ? `${role}@${bracketed(at.host)}:${at.port}` : `${role}-${node}`;
  return { name, role, node: node ?? -(index + 1), pid: 0, log: '', argv: [], host: at.host, ...ports };
}

/** `host:port` for a connection: an IPv6 host in brackets. */
export function hostPortOf({ host, port }: HostPort): string {
  return `${bracketed(host)}:${port}`;
}

function bracketed(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}
