import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readClusterState, writeClusterState } from './local-cluster.js';
import type { ClusterState } from './local-cluster.js';

const state = (pid: number): ClusterState => ({ cluster: 'local', natsUrl: 'nats://127.0.0.1:4222', startedAt: '2026-11-29T00:00:00.000Z', processes: [{ name: 'compute-2', role: 'compute', node: 2, pid, log: 'compute-2.log', argv: [] }] });

describe('cluster.json', () => {
  const dirs: string[] = [];
  afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

  it('is replaced whole: the last state reads back and no partial file is left beside it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'lf-state-'));
    dirs.push(dir);
    for (let pid = 100; pid < 110; pid++) writeClusterState(dir, state(pid));
    expect(readClusterState(dir)?.processes[0]?.pid).toBe(109);
    expect(readdirSync(dir)).toStrictEqual(['cluster.json']);
  });
});
