import { describe, expect, it } from 'vitest';
import { runInMemory } from '@lockfabric/harness';
import type { ProtocolDefinition, ProtocolOptions } from '@lockfabric/locks-common';
import { clientKey } from '@lockfabric/ports';
import { sparseLockId } from '@lockfabric/workloads';
import type { WorkloadSpec } from '@lockfabric/workloads';
import { MappedFissLockClient, fisslock } from '@lockfabric/lock-fisslock';

/** FissLock as the harness runs it, keeping every client it makes so the test can read their traffic. */
function observed(): { protocol: ProtocolDefinition; clients: Map<string, MappedFissLockClient> } {
  const clients = new Map<string, MappedFissLockClient>();
  const protocol: ProtocolDefinition = {
    ...fisslock,
    createClient: (ports, options) => {
      const client = fisslock.createClient(ports, options);
      if (client instanceof MappedFissLockClient) clients.set(clientKey(ports.self), client);
      return client;
    },
  };
  return { protocol, clients };
}

const spec: WorkloadSpec = {
  clients: 6,
  locks: 12,
  lockIds: 'sparse',
  readRatio: 0.5,
  distribution: 'uniform',
  operations: 480,
  thinkNs: 500,
  criticalSectionNs: 3_000,
  seed: 11,
  timeoutMs: 50,
};

async function run(protocolOptions: ProtocolOptions, workload: WorkloadSpec = spec) {
  const { protocol, clients } = observed();
  const result = await runInMemory({ substrate: 'sim', protocol, protocolOptions, spec: workload, computeNodes: 3 });
  return { result, clients };
}

describe('fisslock lockIds=mapped on sparse ids (harness, sim)', () => {
  it('passes the history checker; each client looks up each id it uses once and then hits its cache', async () => {
    const { result, clients } = await run({ lockIds: 'mapped' });
    expect(result.verdict.violations).toEqual([]);
    expect(result.verdict.ok).toBe(true);
    expect(result.cutOff).toBe(false);
    expect(result.summary.acquires).toBe(spec.operations);
    // the history names application ids: the sparse images of the 12 indexes, not 0…11
    const sparse = new Set(Array.from({ length: spec.locks }, (_, i) => sparseLockId(i)));
    const used = new Set(result.history.events().map((e) => e.lock));
    expect([...used].every((id) => sparse.has(id))).toBe(true);
    expect([...used].some((id) => id >= spec.locks)).toBe(true);
    expect(clients.size).toBe(spec.clients);
    let hits = 0;
    for (const [key, client] of clients) {
      const acquires = result.history.events().filter((e) => e.client === key && e.op === 'acquire' && e.phase === 'invoke');
      const distinct = new Set(acquires.map((e) => e.lock)).size;
      expect(client.traffic.lookups, key).toBe(distinct);
      expect(client.traffic.cacheHits, key).toBe(acquires.length - distinct);
      expect(client.traffic.retries, key).toBe(0);
      hits += client.traffic.cacheHits;
    }
    expect(hits).toBeGreaterThan(0);
  }, 60_000);

  it('mutant: a table per machine (machines disagree on lids) is caught by the checker', async () => {
    const contended: WorkloadSpec = { ...spec, locks: 3, readRatio: 0 };
    const { result } = await run({ lockIds: 'mapped', mutantIdMapPerMachine: true }, contended);
    expect(result.verdict.ok).toBe(false);
    expect(result.verdict.violations.length).toBeGreaterThan(0);
    // the same workload with the one shared table is clean
    const { result: sound } = await run({ lockIds: 'mapped' }, contended);
    expect(sound.verdict.violations).toEqual([]);
    expect(sound.verdict.ok).toBe(true);
  }, 60_000);
});
