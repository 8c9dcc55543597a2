import { join } from 'node:path';
import type { ClusterState } from '../cluster/local-cluster.js';
import { isAlive, readClusterState, startLocalCluster, stopLocalCluster } from '../cluster/local-cluster.js';
import { findNatsServer } from '../cluster/nats-binary.js';

export const DEFAULT_CLUSTER_DIR = join('.lockfabric', 'cluster');

export interface Output {
  readonly json: boolean;
  /** Human progress and notes: stderr, silent with --json. */
  note(line: string): void;
}

export function output(json: boolean): Output {
  return { json, note: (line) => (json ? undefined : process.stderr.write(line + '\n')) };
}

/** A running cluster from `lockfabric cluster up`, or a temporary one that `release` stops. */
export async function acquireLiveCluster(
  dir: string,
  out: Output,
  options: { computeNodes?: number; memoryNodes?: number; lockCount?: number; env?: Record<string, string>; switchProgram?: string } = {},
): Promise<{ state: ClusterState; release: () => Promise<void>; temporary: boolean }> {
  const existing = readClusterState(dir);
  if (existing && existing.processes.every((p) => isAlive(p.pid))) {
    out.note(`using the running cluster in ${dir} (NATS ${existing.natsUrl})`);
    return { state: existing, release: async () => undefined, temporary: false };
  }
  const natsUrl = process.env['NATS_URL'];
  if (!natsUrl && !findNatsServer()) throw new Error('the live substrate needs nats-server on PATH (apt-get install nats-server) or NATS_URL');
  const tempDir = join(dir, '..', `run-${process.pid}`);
  out.note(`starting a temporary live cluster (logs in ${tempDir})…`);
  const state = await startLocalCluster({
    dir: tempDir,
    computeNodes: options.computeNodes ?? 2,
    memoryNodes: options.memoryNodes ?? 1,
    ...(options.lockCount ? { lockCount: options.lockCount } : {}),
    ...(natsUrl ? { natsUrl } : {}),
    ...(options.env ? { env: options.env } : {}),
    ...(options.switchProgram ? { switchProgram: options.switchProgram } : {}),
    onStatus: (line) => out.note(`  ${line}`),
  });
  return { state, release: async () => void (await stopLocalCluster(tempDir)), temporary: true };
}
