import type { ProtocolOptions } from '@lockfabric/locks-common';
import { runInMemory } from '@lockfabric/harness';
import type { InMemoryRunResult } from '@lockfabric/harness';
import { SeededRandom } from '@lockfabric/sim';
import type { WorkloadSpec } from '@lockfabric/workloads';
import { observedAlock } from '../../src/index.js';
import type { AlockEvent } from '../../src/index.js';
import { checkAlockEvents } from './invariants.js';
import type { InvariantReport } from './invariants.js';

/** One seed's configuration, every choice drawn from the seed ("swarm" testing: each seed a different mix). */
export interface SwarmCase {
  readonly seed: number;
  readonly spec: WorkloadSpec;
  readonly colocatedClients: number;
  readonly computeNodes: number;
  readonly memoryNodes: number;
  readonly jitterNs: number;
  readonly protocolOptions: ProtocolOptions & { localBudget: number; remoteBudget: number };
}

export interface SwarmOverrides {
  readonly protocolOptions?: ProtocolOptions;
  readonly spec?: Partial<WorkloadSpec>;
  /** Force one memory node, so every co-located client is local to every lock. */
  readonly singleMemoryNode?: boolean;
}

export function swarmCase(seed: number, overrides: SwarmOverrides = {}): SwarmCase {
  const r = new SeededRandom(seed * 7919 + 17);
  const pick = <T>(values: readonly T[]): T => values[r.int(values.length)] as T;
  const clients = 4 + r.int(7); // 4..10
  const colocatedClients = 1 + r.int(clients - 1); // at least one local and one remote client
  const shortTimeouts = r.next() < 0.15; // some seeds time out while queued, exercising abandonment
  const spec: WorkloadSpec = {
    clients,
    locks: pick([1, 1, 2, 3, 4]),
    readRatio: 0.3,
    distribution: pick(['uniform', { zipf: 0.99 }] as const),
    operations: 80 + r.int(61),
    thinkNs: r.int(1_000),
    criticalSectionNs: 200 + r.int(1_800),
    seed,
    timeoutMs: shortTimeouts ? 0.01 + r.next() * 0.03 : 20,
    ...overrides.spec,
  };
  return {
    seed,
    spec,
    colocatedClients,
    computeNodes: 1 + r.int(3),
    memoryNodes: overrides.singleMemoryNode || r.next() < 0.75 ? 1 : 2,
    jitterNs: r.int(1_000),
    protocolOptions: {
      localBudget: 1 + r.int(5),
      remoteBudget: 1 + r.int(5),
      spinNs: pick([100, 300, 1_000]),
      remoteSpinNs: pick([500, 1_000, 3_000]),
      petersonRead: pick(['separate', 'combined']),
      sameNodeStores: r.next() < 0.3,
      ...overrides.protocolOptions,
    },
  };
}

export interface SwarmResult {
  readonly run: InMemoryRunResult;
  readonly invariants: InvariantReport;
  readonly events: readonly AlockEvent[];
}

/** Runs one case on `sim` with every client reporting its protocol steps, and checks them. */
export async function runSwarmCase(c: SwarmCase): Promise<SwarmResult> {
  const events: AlockEvent[] = [];
  const run = await runInMemory({
    substrate: 'sim',
    protocol: observedAlock((event) => events.push(event)),
    protocolOptions: c.protocolOptions,
    spec: c.spec,
    colocatedClients: c.colocatedClients,
    computeNodes: c.computeNodes,
    memoryNodes: c.memoryNodes,
    jitterNs: c.jitterNs,
  });
  const invariants = checkAlockEvents(events, { localBudget: c.protocolOptions.localBudget, remoteBudget: c.protocolOptions.remoteBudget });
  return { run, invariants, events };
}

/** A one-line description of a failed case, with what reproduces it. */
export function describeCase(c: SwarmCase, result: SwarmResult): string {
  const { verdict } = result.run;
  return [
    `seed ${c.seed}: swarmCase(${c.seed}) clients=${c.spec.clients} colocated=${c.colocatedClients} locks=${c.spec.locks} memoryNodes=${c.memoryNodes} options=${JSON.stringify(c.protocolOptions)}`,
    `  exclusion violations ${verdict.violations.length}, liveness ${verdict.liveness.ok ? 'ok' : verdict.liveness.violations.length + ' violations'}, cut off ${result.run.cutOff}`,
    ...result.invariants.violations.slice(0, 3).map((v) => `  ${v}`),
  ].join('\n');
}
