import { ConfigError } from '@lockfabric/ports';
import { describe, expect, it } from 'vitest';
import { checkCommand } from './check.js';
import { runInMemory } from '../run/in-memory.js';

describe('lockfabric check: the protocol is checked before any seed runs', () => {
  it('redlock (not a fabric protocol) and an unknown id are configuration errors, listed with the other problems', async () => {
    await expect(checkCommand(['--protocol', 'redlock', '--seeds', '0'])).rejects.toThrow(ConfigError);
    const error = await checkCommand(['--protocol', 'nolock', '--seeds', '0']).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).issues.join('\n')).toMatch(/--seeds[\s\S]*unknown protocol "nolock"|unknown protocol "nolock"[\s\S]*--seeds/);
  });
});

describe('lockfabric check and bench: a protocol fitted to the workload, or refused as configuration', () => {
  it('a capacity the protocol refuses in its client factory is a ConfigError (exit 2), not a crashed seed', async () => {
    const error = await checkCommand(['--protocol', 'declock-cql', '--clients', '64', '--opt', 'capacity=8', '--seeds', '1', '--json']).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).issues.join('\n')).toMatch(/capacity 8 allows 8/);
  });

  it('declock-cql sizes its queue to the clients (64 > the default 32) and passes', async () => {
    const result = await runInMemory({ substrate: 'sim', protocol: 'declock-cql', spec: { clients: 64, locks: 2, readRatio: 0.5, distribution: 'uniform', operations: 640, thinkNs: 0, criticalSectionNs: 200, seed: 2 } });
    expect(result.verdict.ok).toBe(true);
    expect(result.summary.acquires).toBe(640);
  }, 60_000);

  it('declock sizes its queue to more than 8 compute nodes (DecLock Fig. 15)', async () => {
    const result = await runInMemory({ substrate: 'sim', protocol: 'declock', computeNodes: 12, spec: { clients: 24, locks: 1, readRatio: 0.5, distribution: 'uniform', operations: 480, thinkNs: 0, criticalSectionNs: 200, seed: 2 } });
    expect(result.verdict.ok).toBe(true);
    expect(result.summary.acquires).toBe(480);
  }, 60_000);
});
