import { describe, expect, it } from 'vitest';
import { describeReport, switchGrantFigures, verdictWord } from './bench-report.js';
import type { BenchReport } from './bench-report.js';

describe('bench report figures', () => {
  it('counts only the grants the switch decided, as a share of the acquires', () => {
    const decisions = { 'grant-switch': 30, 'grant-shared': 10, forward: 500, 'queue-full': 7 };
    expect(switchGrantFigures(decisions, 80)).toEqual({ switchGrants: 40, switchGrantShare: 0.5 });
    expect(switchGrantFigures({ forward: 9 }, 10)).toEqual({ switchGrants: 0, switchGrantShare: 0 });
    expect(switchGrantFigures({ 'grant-switch': 3 }, 0)).toEqual({ switchGrants: 3, switchGrantShare: 0 });
  });

  it('says violation before liveness, and unchecked when the checker did not run', () => {
    expect(verdictWord({ checked: true, violations: 0, livenessViolations: 0 })).toBe('ok');
    expect(verdictWord({ checked: true, violations: 2, livenessViolations: 1 })).toBe('violation');
    expect(verdictWord({ checked: true, violations: 0, livenessViolations: 1 })).toBe('liveness');
    expect(verdictWord({ checked: false, violations: 0, livenessViolations: 0 })).toBe('unchecked');
  });

  it('names NIC IOPS per node only when some node served verbs (a switch run has none)', () => {
    const base = {
      protocol: 'fisslock',
      substrate: 'live',
      throughput: 1000,
      elapsedMs: 10,
      acquires: 10,
      failures: 0,
      latencyUs: { p50: 1, p90: 2, p99: 3, p999: 4 },
      verbsPerAcquire: { total: 0 },
      verbsPerRelease: { total: 0 },
      checked: true,
      violations: 0,
      livenessViolations: 0,
      failuresByCode: {},
    } as unknown as BenchReport;
    expect(describeReport({ ...base, nicIops: {} })).not.toMatch(/NIC IOPS/);
    expect(describeReport({ ...base, nicIops: { 'memory-0': 1234.4 } })).toMatch(/NIC IOPS by node {4}memory-0: 1,234\/s/);
  });
});
