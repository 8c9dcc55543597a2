import { protocolById } from '@lockfabric/lock-catalog';
import { ConfigError } from '@lockfabric/ports';
import { describe, expect, it } from 'vitest';
import { withClusterRacks } from './rack-options.js';

describe('a compute node of a multi-rack cluster (switch.racks)', () => {
  it('tells fisslock the rack count; one rack or a verbs protocol leaves the options alone', () => {
    expect(withClusterRacks(protocolById('fisslock'), { rtoNs: '5' }, 2)).toEqual({ rtoNs: '5', racks: '2' });
    const given = { policy: 'read-preferring' };
    expect(withClusterRacks(protocolById('fisslock'), given, 1)).toBe(given);
    expect(withClusterRacks(protocolById('caslock'), given, 2)).toBe(given);
  });

  it('refuses a run that names another count, and a switch protocol that cannot partition lock ids', () => {
    expect(() => withClusterRacks(protocolById('fisslock'), { racks: '3' }, 2)).toThrow(ConfigError);
    expect(() => withClusterRacks(protocolById('fisslock'), { racks: '2' }, 1)).toThrow(/this cluster has 1 rack/);
    expect(() => withClusterRacks(protocolById('netlock'), {}, 2)).toThrow(/netlock does not partition/);
  });
});
