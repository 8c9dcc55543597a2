import { ConfigError } from '@lockfabric/ports';
import { describe, expect, it } from 'vitest';
import { drtm, readDrtmOptions } from '../src/index.js';

// Leases are in ms across protocols (docs/cli.md); DrTM's lease was `leaseNs` and is still read.
describe('drtm lease option: leaseMs, with the old leaseNs still read', () => {
  it('reads leaseMs in ms and keeps the default of 1 ms', () => {
    expect(readDrtmOptions().leaseNs).toBe(1_000_000);
    expect(readDrtmOptions({ leaseMs: 50 }).leaseNs).toBe(50_000_000);
    expect(readDrtmOptions({ leaseMs: '0.03', driftNs: 1_000, txMarginNs: 4_000 }).leaseNs).toBe(30_000);
  });

  it('reads the old name in ns to the same lease, and the help names only leaseMs', () => {
    expect(readDrtmOptions({ leaseNs: '50000000' })).toEqual(readDrtmOptions({ leaseMs: '50' }));
    expect(readDrtmOptions({ leaseNs: 1_234_567 }).leaseNs).toBe(1_234_567);
    expect(Object.keys(drtm.options)).toContain('leaseMs');
    expect(Object.keys(drtm.options)).not.toContain('leaseNs');
    expect(drtm.renamedOptions?.['leaseNs']).toMatch(/deprecated: use leaseMs/);
  });

  it('refuses both names at once and an old-name value below the minimum, naming it', () => {
    expect(() => readDrtmOptions({ leaseNs: 2_000_000, leaseMs: 2 })).toThrow(/leaseNs is the old name of leaseMs: give only leaseMs/);
    expect(() => readDrtmOptions({ leaseNs: 500 })).toThrow(ConfigError);
    expect(() => readDrtmOptions({ leaseNs: 500 })).toThrow(/given as leaseNs/);
  });
});
