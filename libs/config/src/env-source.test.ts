import { describe, expect, it } from 'vitest';
import { CONFIG_KEYS, envName, flagName } from './config-keys.js';
import { readEnv } from './env-source.js';

describe('environment and flag names', () => {
  it('derive from key paths', () => {
    expect(envName(['coordinator', 'heartbeatIntervalMs'])).toBe('LOCKFABRIC_COORDINATOR_HEARTBEAT_INTERVAL_MS');
    expect(flagName(['coordinator', 'heartbeatIntervalMs'])).toBe('coordinator.heartbeat-interval-ms');
    expect(envName(['trace', 'slowMs'])).toBe('LOCKFABRIC_TRACE_SLOW_MS');
  });

  it('are unique across keys, so no variable or flag is ambiguous', () => {
    expect(new Set(CONFIG_KEYS.map((key) => key.env)).size).toBe(CONFIG_KEYS.length);
    expect(new Set(CONFIG_KEYS.map((key) => key.flag)).size).toBe(CONFIG_KEYS.length);
    expect(CONFIG_KEYS.map((key) => key.key)).toContain('memory.iopsCap');
  });

  it('ignores variables outside the prefix and the config-file variable', () => {
    expect(readEnv({ HOME: '/root', LOCKFABRIC_CONFIG: 'x.json', NATS_URL: 'x' })).toEqual({ assignments: [], issues: [] });
  });
});
