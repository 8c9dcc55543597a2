import { describe, expect, it } from 'vitest';
import { configFileSchema, configSchema } from './schema.js';

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
