import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { startLocalCluster, stopLocalCluster } from '@lockfabric/workload-driver';
import type { ClusterState, LocalClusterOptions } from '@lockfabric/workload-driver';

let clusters = 0;

/**
 * A live cluster of separate processes for one test file, in a fresh temp dir. Each gets its own
 * cluster name (the NATS subject prefix), so no process of another cluster on this machine — a
 * parallel test's, or a leftover that reconnects to a reused port — can ever exchange a message with it.
 * `E2E_KEEP_CLUSTER_DIR=1` keeps the dir (service logs) after the test, for diagnosis.
 */
export async function withLiveCluster(options: Omit<LocalClusterOptions, 'dir'> = {}): Promise<{ state: ClusterState; dir: string; stop(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'lockfabric-e2e-'));
  const cluster = `e2e-${process.pid}-${++clusters}`;
  const state = await startLocalCluster({ dir, cluster, lockCount: 65_536, clientsPerComputeNode: 64, readyTimeoutMs: 60_000, ...options });
  return {
    state,
    dir,
    stop: async () => {
      await stopLocalCluster(dir, 5_000);
      if (process.env['E2E_KEEP_CLUSTER_DIR'] === '1') console.log(`live cluster ${cluster} kept in ${dir}`);
      else rmSync(dir, { recursive: true, force: true });
    },
  };
}

export type LiveCluster = Awaited<ReturnType<typeof withLiveCluster>>;

/** One live cluster for the calling `describe`: started before its tests, stopped after them. */
export function liveClusterForSuite(options: Omit<LocalClusterOptions, 'dir'> = {}): () => LiveCluster {
  let cluster: LiveCluster | undefined;
  beforeAll(async () => {
    cluster = await withLiveCluster(options);
  }, 120_000);
  afterAll(async () => {
    await cluster?.stop();
  });
  return () => {
    if (!cluster) throw new Error('the live cluster did not start (see beforeAll)');
    return cluster;
  };
}
