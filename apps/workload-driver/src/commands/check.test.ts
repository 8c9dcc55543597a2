import { ConfigError } from '@lockfabric/ports';
import { describe, expect, it } from 'vitest';
import { checkCommand } from './check.js';

describe('lockfabric check: the protocol is checked before any seed runs', () => {
  it('redlock (not a fabric protocol) and an unknown id are configuration errors, listed with the other problems', async () => {
    await expect(checkCommand(['--protocol', 'redlock', '--seeds', '0'])).rejects.toThrow(ConfigError);
    const error = await checkCommand(['--protocol', 'nolock', '--seeds', '0']).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).issues.join('\n')).toMatch(/--seeds[\s\S]*unknown protocol "nolock"|unknown protocol "nolock"[\s\S]*--seeds/);
  });
});
