import { describe, expect, it } from 'vitest';
import { ConfigError } from '@lockfabric/ports';
import type { ClusterState } from '../cluster/local-cluster.js';
import type { ProcessRecord } from '../cluster/local-cluster.js';
import { checkTargets, targetsOf } from './nemesis.js';

const record = (role: string, node: number, down?: string): ProcessRecord =>
  ({ name: `${role}-${node}`, role, node, pid: 0, log: '', argv: [], ...(down ? { downAtDiscovery: down } : {}) }) as unknown as ProcessRecord;

const state = (processes: ProcessRecord[]): ClusterState => ({ cluster: 'c', natsUrl: 'nats://x:4222', startedAt: '', processes });

describe('nemesis targets on a discovered cluster', () => {
  it('refuses compute-node faults when only one compute node answered discovery', () => {
    const s = state([record('memory', 0), record('compute', 1), record('compute', 2, 'closed')]);
    let problems: readonly string[] = [];
    try {
      checkTargets(s, ['kill'], true);
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      problems = (error as ConfigError).issues;
    }
    expect(problems.some((p) => p.includes('at least two compute nodes that answer') && p.includes('found 1'))).toBe(true);
    // Consistent with the targets: the only live compute node is spared, so none would be left to fault.
    expect(targetsOf(s, true).compute).toEqual([]);
  });

  it('accepts them with two answering compute nodes beside one down', () => {
    const s = state([record('memory', 0), record('compute', 1), record('compute', 2), record('compute', 3, 'closed')]);
    expect(checkTargets(s, ['kill'], true)).toBe(s);
    expect(targetsOf(s, true).compute).toEqual(['compute-2']);
  });
});
