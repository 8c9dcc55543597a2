import { probeTls } from '@lockfabric/live';
import type { TlsProbeOutcome } from '@lockfabric/live';
import { FabricAccessError } from '@lockfabric/ports';
import type { ProcessRecord } from '../cluster/local-cluster.js';
import { isRunning } from '../cluster/process-control.js';
import { addressOf, downAtDiscovery } from './remote-cluster.js';

/**
 * How long the driver waits for a node's ports to answer a TLS hello before the run. A live node
 * answers in milliseconds; a dead one refuses at once; only a paused or cut-off one uses it all.
 */
export const REACH_TIMEOUT_MS = 2_000;

/** A node the driver found down before the run started. */
export interface NodeDownAtStart {
  readonly node: number;
  readonly name: string;
  readonly role: ProcessRecord['role'];
  readonly reason: string;
}

export interface ReachOptions {
  readonly timeoutMs?: number;
  /** Injected by tests; the default sends a TLS ClientHello and destroys the socket itself. */
  readonly probe?: (address: string, timeoutMs: number) => Promise<TlsProbeOutcome>;
  /** Injected by tests; the default reads /proc (a zombie is not running). */
  readonly running?: (pid: number) => boolean;
}

/** The ports the driver and the other nodes use of a record: what must answer for it to take part. */
export function portsToProbe(record: ProcessRecord): string[] {
  const ports = record.role === 'compute' ? [record.grpc, record.memoryGrpc] : record.role === 'memory' ? [record.grpc] : [];
  return ports.filter((p): p is number => p !== undefined).map((p) => addressOf(record, p));
}

/**
 * The records (memory and compute nodes) that are down: a port that refuses, does not answer a
 * TLS hello within the timeout, or closes without answering it (the cut proxy in front of a node
 * whose process is gone: only the node can answer, a cut or a dead upstream cannot), and a remote
 * node discovery could not ask its id. The ports decide, not the pid: a record the caller read before a
 * restart carries the old pid while the node, restarted on the same ports, is up (a zombie or a
 * killed process refuses at once, a paused one does not answer). The pid only words the reason.
 * Not gRPC's own connect: grpc-js keeps the socket of a handshake that never completes (a
 * SIGSTOPped node) open after the channel is closed, so a failed run against a paused node never
 * exited; this probe closes its socket itself.
 */
export async function findDownNodes(records: readonly ProcessRecord[], options: ReachOptions = {}): Promise<NodeDownAtStart[]> {
  const timeoutMs = options.timeoutMs ?? REACH_TIMEOUT_MS;
  const probe = options.probe ?? probeTls;
  const running = options.running ?? isRunning;
  const verdicts = await Promise.all(
    records.map(async (record): Promise<NodeDownAtStart | undefined> => {
      const known = downAtDiscovery(record);
      if (known !== undefined) return { node: record.node, name: record.name, role: record.role, reason: known };
      const outcomes = await Promise.all(portsToProbe(record).map(async (address) => ({ address, outcome: await probe(address, timeoutMs) })));
      const silent = outcomes.find((o) => o.outcome === 'unreachable' || o.outcome === 'closed');
      if (!silent) return undefined;
      // Remote records carry pid 0: only their ports tell.
      const gone = record.pid > 0 && !running(record.pid);
      const closed = silent.outcome === 'closed';
      const reason = gone
        ? `its process (pid ${record.pid}) is not running and ${silent.address} ${closed ? 'closed without answering' : 'refused'}`
        : closed
          ? `${silent.address} accepted the connection and closed it without answering (a relay in front of a node that is gone?)`
          : `${silent.address} refused or did not answer within ${timeoutMs} ms (killed, paused or cut off?)`;
      return { node: record.node, name: record.name, role: record.role, reason };
    }),
  );
  return verdicts.filter((v): v is NodeDownAtStart => v !== undefined);
}

/**
 * What a run can do with the nodes found down: every memory node must be up (each holds part of
 * the lock table) and at least one compute node; the others' clients do not start. Throws the
 * CLI's unreachable-cluster error (exit 4) otherwise.
 */
export function survivingComputeNodes(computes: readonly ProcessRecord[], down: readonly NodeDownAtStart[], tolerateNodeFailures: boolean): ProcessRecord[] {
  const describe = (nodes: readonly NodeDownAtStart[]) => nodes.map((d) => `${d.name}: ${d.reason}`).join('; ');
  const memories = down.filter((d) => d.role === 'memory');
  if (memories.length > 0) throw new FabricAccessError('unreachable', `memory node down at the start of the run (${describe(memories)}); a run needs every memory node, each holds part of the lock table: restart it (lockfabric chaos restart) or the cluster`);
  const downComputes = down.filter((d) => d.role === 'compute');
  const up = computes.filter((c) => !downComputes.some((d) => d.node === c.node));
  if (up.length === 0) throw new FabricAccessError('unreachable', `no compute node is up at the start of the run (${describe(downComputes)})`);
  if (downComputes.length > 0 && !tolerateNodeFailures) throw new FabricAccessError('unreachable', `compute node down at the start of the run (${describe(downComputes)})`);
  return up;
}
