import { join } from 'node:path';
import type { ClusterState, SwitchSettings } from '../cluster/local-cluster.js';
import { isAlive, isRunning } from '../cluster/process-control.js';
import { locateNatsServer } from '@lockfabric/nats-server';
import { MissingToolError } from '../cluster/errors.js';

/**
 * Clusters the CLI starts (demo, live bench, `cluster up`) suspect a member after 10 missed
 * heartbeats (1 s), not the config default of 3: on a busy machine a compute node that encodes a
 * large history at the end of a run stalls its event loop for a few hundred ms, and a member
 * declared dead stays fenced until it restarts, so every later run would lose that node's clients.
 */
export const INTERACTIVE_CLUSTER_ENV: Readonly<Record<string, string>> = { LOCKFABRIC_COORDINATOR_MISSES_BEFORE_SUSPECT: '10' };

export { DEFAULT_CLUSTER_DIR } from '../cluster/cluster-dir.js';

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
  options: { computeNodes?: number; memoryNodes?: number; lockCount?: number; memoryIopsCap?: number; env?: Record<string, string>; switchProgram?: string; switchSettings?: SwitchSettings; racks?: number; withCutProxy?: boolean; insecure?: boolean } = {},
): Promise<{ state: ClusterState; release: () => Promise<void>; temporary: boolean; dir: string }> {
  // Loaded here, not at the top: commands import this module for `output` and must not pay for the cluster code.
  const { readClusterState, startLocalCluster, stopLocalCluster } = await import('../cluster/local-cluster.js');
  const existing = readClusterState(dir);
  // A cluster with a killed member is still the user's cluster (they may be testing recovery):
  // use it and say what is down, rather than silently starting another one.
  if (existing && existing.processes.some((p) => isAlive(p.pid))) {
    out.note(`using the running cluster in ${dir} (NATS ${existing.natsUrl})`);
    const down = existing.processes.filter((p) => !isRunning(p.pid)).map((p) => p.name);
    if (down.length > 0) out.note(`warning: not running in that cluster: ${down.join(', ')} (lockfabric cluster status; chaos restart brings one back)`);
    return { state: existing, release: async () => undefined, temporary: false, dir };
  }
  const natsUrl = process.env['NATS_URL'];
  if (!natsUrl && !locateNatsServer()) throw new MissingToolError('nats-server', 'the live substrate needs nats-server on PATH (apt-get install nats-server) or NATS_URL');
  const tempDir = join(dir, '..', `run-${process.pid}`);
  out.note(`starting a temporary live cluster (logs in ${tempDir})…`);
  const state = await startLocalCluster({
    dir: tempDir,
    computeNodes: options.computeNodes ?? 2,
    memoryNodes: options.memoryNodes ?? 1,
    ...(options.lockCount ? { lockCount: options.lockCount } : {}),
    ...(options.memoryIopsCap ? { memoryIopsCap: options.memoryIopsCap } : {}),
    ...(natsUrl ? { natsUrl } : {}),
    env: { ...INTERACTIVE_CLUSTER_ENV, ...options.env },
    ...(options.switchProgram ? { switchProgram: options.switchProgram } : {}),
    ...(options.switchSettings ? { switchSettings: options.switchSettings } : {}),
    ...(options.racks ? { racks: options.racks } : {}),
    ...(options.withCutProxy ? { withCutProxy: true } : {}),
    ...(options.insecure ? { insecure: true } : {}),
    onStatus: (line) => out.note(`  ${line}`),
    // Stopped by release(); a parent watch stops it too if this process is killed before that.
    dieWithParent: true,
  });
  return { state, release: async () => void (await stopLocalCluster(tempDir)), temporary: true, dir: tempDir };
}
