import { ConfigError } from '@lockfabric/ports';
import { describe, expect, it } from 'vitest';
import { switchSettingFlags } from '../cluster/local-cluster.js';
import { clusterCommand } from './cluster.js';

async function problemsOf(argv: string[]): Promise<readonly string[]> {
  try {
    await clusterCommand(argv);
  } catch (error) {
    if (error instanceof ConfigError) return error.issues;
    throw error;
  }
  throw new Error(`accepted ${argv.join(' ')}`);
}

describe('lockfabric cluster up: switch settings', () => {
  it('rejects a bad program, policy or lock count, and fisslock settings for another program, before starting anything', async () => {
    expect(await problemsOf(['up', '--switch-program', 'tofino'])).toStrictEqual(['--switch-program: expected one of forward, fisslock, netlock, got "tofino"']);
    expect(await problemsOf(['up', '--switch-program', 'fisslock', '--switch-policy', 'fair', '--switch-lock-count', '0'])).toStrictEqual([
      '--switch-lock-count: expected an integer ≥ 1, got "0"',
      '--switch-policy: expected one of read-preferring, starvation-prevention, write-preferring, got "fair"',
    ]);
    expect(await problemsOf(['up', '--switch-policy', 'write-preferring'])).toStrictEqual(['--switch-policy and --switch-lock-count apply to --switch-program fisslock only']);
  });

  it('passes the settings to the switch-dataplane as its config flags', () => {
    expect(switchSettingFlags({ policy: 'write-preferring', lockCount: 4_096 })).toStrictEqual(['--switch.policy=write-preferring', '--switch.lock-count=4096']);
    expect(switchSettingFlags(undefined)).toStrictEqual([]);
  });
});
