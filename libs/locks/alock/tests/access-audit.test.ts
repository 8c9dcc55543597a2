import { runInMemory } from '@lockfabric/harness';
import type { ProtocolOptions } from '@lockfabric/locks-common';
import { describe, expect, it } from 'vitest';
import { alock } from '../src/index.js';
import { AccessAudit, auditedAlock } from './support/access-audit.js';

/** One memory node (node 0): co-located clients are local to every lock. */
async function audited(protocolOptions: ProtocolOptions, seed: number) {
  const audit = new AccessAudit((node) => node === 0);
  const result = await runInMemory({
    substrate: 'sim',
    protocol: auditedAlock(alock, audit, (node) => node === 0),
    protocolOptions,
    spec: { clients: 8, locks: 2, readRatio: 0.3, distribution: 'uniform', operations: 200, thinkNs: 200, criticalSectionNs: 500, seed, timeoutMs: 20 },
    colocatedClients: 4,
    computeNodes: 2,
  });
  return { audit, result };
}

describe('alock access-class audit (spec E8, I8)', () => {
  it('T_L is RMW’d only by CPUs and read by the NIC; T_R the reverse; victim and descriptors are never RMW’d; local clients issue no verbs', async () => {
    for (const seed of [1, 2, 3]) {
      const { audit, result } = await audited({ petersonRead: seed === 3 ? 'combined' : 'separate' }, seed);
      expect(result.verdict.ok).toBe(true);
      expect(audit.byRole.get('T_L')).toEqual(new Set(['cpu:rmw', 'nic:read']));
      // A combined Peterson READ also reads T_R, which sits between T_L and victim.
      expect(audit.byRole.get('T_R')).toEqual(new Set(seed === 3 ? ['nic:rmw', 'cpu:read', 'nic:read'] : ['nic:rmw', 'cpu:read']));
      expect([...audit.byRole.get('victim')!].sort()).toEqual(['cpu:read', 'cpu:write', 'nic:read', 'nic:write']);
      expect([...audit.byRole.get('descriptor')!].some((tag) => tag.endsWith(':rmw'))).toBe(false);
      expect(audit.unsafeWords()).toEqual([]);
      expect(audit.verbsFromMemoryNodes.size).toBe(0);
    }
  });

  it('the audit flags the naive lock (M0): one word RMW’d by CPU and NIC alike', async () => {
    const { audit } = await audited({ mutantNaiveLocalCas: true }, 1);
    expect(audit.unsafeWords().length).toBeGreaterThan(0);
    expect(audit.byRole.get('T_L')).toContain('nic:rmw');
  });
});
