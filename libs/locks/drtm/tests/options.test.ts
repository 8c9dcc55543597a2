import { ConfigError } from '@lockfabric/ports';
import { describe, expect, it } from 'vitest';
import { drtm, readDrtmOptions } from '../src/index.js';

// Duration options are in ns in every protocol (docs/architecture.md); DrTM's lease was leaseMs for a while.
describe('drtm lease option: leaseNs', () => {
  it('reads leaseNs and keeps the default of 1 ms', () => {
    expect(readDrtmOptions().leaseNs).toBe(1_000_000);
    expect(readDrtmOptions({ leaseNs: 50_000_000 }).leaseNs).toBe(50_000_000);
    expect(readDrtmOptions({ leaseNs: '30000', driftNs: 1_000, txMarginNs: 4_000 }).leaseNs).toBe(30_000);
    expect(Object.keys(drtm.options)).toContain('leaseNs');
    expect(Object.keys(drtm.options)).not.toContain('leaseMs');
  });

  it('refuses the old leaseMs, naming leaseNs and the value in ns', () => {
    expect(() => readDrtmOptions({ leaseMs: '50' })).toThrow(ConfigError);
    expect(() => readDrtmOptions({ leaseMs: '50' })).toThrow('drtm option leaseMs was renamed leaseNs (nanoseconds): leaseNs=50000000');
    expect(() => readDrtmOptions({ leaseNs: 1_500.5 })).toThrow(/leaseNs: expected an integer/);
  });
});
