import { describe, expect, it } from 'vitest';
import { RunStats, VerbAccounting, summarize } from '@lockfabric/workloads';
import type { LiveRunResult } from '../run/live.js';
import { describeReport } from '../report/bench-report.js';
import { demoRackLines } from './demo.js';
import { liveDemoReport } from './demo-live.js';

/** A live fisslock run of 100 acquires over two racks, as runLive returns it (the fields the demo reads). */
function twoRackRun(switchGrantsByRack: readonly number[] | undefined): LiveRunResult {
  const stats = new RunStats();
  for (let i = 0; i < 100; i++) stats.recordAcquire(20_000);
  const decisions = { 'grant-switch': 70, forward: 30 };
  return {
    summary: summarize(stats, 1e9),
    accounting: new VerbAccounting(),
    verdict: undefined,
    switch: { program: 'fisslock', hotLocks: 0, queueSlots: 0, decisions, switchGrants: 70, switchGrantShare: 0.7, ...(switchGrantsByRack ? { switchGrantsByRack } : {}) },
  } as unknown as LiveRunResult;
}

describe('demo on a cluster of several racks', () => {
  it("reports every rack's switch, not only rack 0's: per-rack grants in the row, the text and bench's description", () => {
    const row = liveDemoReport('fisslock', twoRackRun([30, 40]), 1_000);
    expect(row.switchGrantsByRack).toStrictEqual([30, 40]);
    expect(row.switchGrants).toBe(70);
    expect(demoRackLines([row])).toStrictEqual(["fisslock: switch-decided grants by rack's switch: rack 0 30, rack 1 40"]);
    expect(describeReport(row)).toMatch(/switch-decided {6}70 grants \(70\.0 % of acquires\); by rack: rack 0 30, rack 1 40/);
  });

  it('says nothing per rack when there is one', () => {
    const row = liveDemoReport('fisslock', twoRackRun(undefined), 1_000);
    expect(row.switchGrantsByRack).toBeUndefined();
    expect(demoRackLines([row])).toStrictEqual([]);
    expect(describeReport(row)).not.toMatch(/by rack/);
  });
});
