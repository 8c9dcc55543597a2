import { describe, expect, it } from 'vitest';
import { configFileSchema, configSchema, parseLeaseBounds } from './schema.js';

describe('exported schemas (for ConfigMaps)', () => {
  it('a ConfigMap may omit the role and anything with a default', () => {
    const parsed = configFileSchema.parse({ cluster: 'k8s', nats: { url: 'nats://nats.lockfabric.svc:4222' } });
    expect(parsed.node).toEqual({ id: 0, rack: 0 });
    expect(parsed.coordinator.heartbeatIntervalMs).toBe(100);
  });

  it('rejects unknown keys at any depth', () => {
    expect(configFileSchema.safeParse({ nats: { url: 'nats://x:1', user: 'u' } }).success).toBe(false);
    expect(configFileSchema.safeParse({ extra: true }).success).toBe(false);
  });

  it('the full schema requires the role', () => {
    expect(configSchema.safeParse({}).success).toBe(false);
    expect(configSchema.safeParse({ node: { role: 'memory' } }).success).toBe(true);
  });
});

describe('coordinator.leaseBoundsMs', () => {
  it('accepts protocol=ms entries and reads them as a record', () => {
    const config = configSchema.parse({ node: { role: 'coordinator' }, coordinator: { leaseBoundsMs: ['dslr=525', 'shiftlock=30.5'] } });
    expect(parseLeaseBounds(config.coordinator.leaseBoundsMs)).toStrictEqual({ dslr: 525, shiftlock: 30.5 });
    expect(parseLeaseBounds(undefined)).toBeUndefined();
  });

  it('rejects entries that are not protocol=ms', () => {
    for (const bad of ['dslr', 'dslr=-1', '=5', 'dslr=5ms']) {
      expect(configSchema.safeParse({ node: { role: 'coordinator' }, coordinator: { leaseBoundsMs: [bad] } }).success, bad).toBe(false);
    }
  });
});
