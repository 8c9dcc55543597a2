import { describe, expect, it } from 'vitest';
import { readFlags } from './flag-source.js';

describe('readFlags', () => {
  it('maps kebab-case dotted flags to key paths and keeps positionals', () => {
    const result = readFlags(['bench', '--memory.lock-count=5', '--coordinator.heartbeat-interval-ms', '50', '--config', 'x.json', '--', '--cluster=y']);
    expect(result.assignments).toEqual([
      { path: ['memory', 'lockCount'], value: 5, source: '--memory.lock-count' },
      { path: ['coordinator', 'heartbeatIntervalMs'], value: 50, source: '--coordinator.heartbeat-interval-ms' },
    ]);
    expect(result.configFile).toBe('x.json');
    expect(result.positionals).toEqual(['bench', '--cluster=y']);
    expect(result.issues).toEqual([]);
  });

  it('passes text that is not a number through for validation to report', () => {
    expect(readFlags(['--memory.lock-count=12abc']).assignments[0]?.value).toBe('12abc');
    expect(readFlags(['--memory.lock-count=']).assignments[0]?.value).toBe('');
  });
});
