import { describe, expect, it } from 'vitest';
import { encodeRef } from '../src/index.js';
import type { AlockEvent, AlockEventBody } from '../src/index.js';
import { checkAlockEvents } from './support/invariants.js';

const L1 = encodeRef({ node: 0, client: 1, index: 0 });
const L2 = encodeRef({ node: 0, client: 2, index: 0 });
const R1 = encodeRef({ node: 1, client: 3, index: 0 });
const R2 = encodeRef({ node: 2, client: 4, index: 1 });
const local = (ref: bigint, body: AlockEventBody): AlockEvent => ({ lock: 0, cls: 'local', ref, ...body }) as AlockEvent;
const remote = (ref: bigint, body: AlockEventBody): AlockEvent => ({ lock: 0, cls: 'remote', ref, ...body }) as AlockEvent;
const budgets = { localBudget: 2, remoteBudget: 2 };

/** L1 leads, hands to L2 with budget 1; R1 waits as head, then enters when the local queue empties. */
const good: AlockEvent[] = [
  local(L1, { type: 'swap', pred: 0n }),
  local(L1, { type: 'victim' }),
  local(L1, { type: 'enter', kind: 'leader', budget: 2, pred: 0n }),
  remote(R1, { type: 'swap', pred: 0n }),
  remote(R1, { type: 'victim' }),
  local(L2, { type: 'swap', pred: L1 }),
  local(L2, { type: 'link', pred: L1 }),
  local(L1, { type: 'exit' }),
  local(L1, { type: 'handoff', to: L2, budget: 1 }),
  local(L2, { type: 'enter', kind: 'passed', budget: 1, pred: L1 }),
  local(L2, { type: 'exit' }),
  local(L2, { type: 'emptied' }),
  remote(R1, { type: 'enter', kind: 'leader', budget: 2, pred: 0n }),
  remote(R1, { type: 'exit' }),
  remote(R1, { type: 'emptied' }),
];

function replace(events: AlockEvent[], index: number, event: AlockEvent): AlockEvent[] {
  return events.map((e, i) => (i === index ? event : e));
}

describe('ALock invariant checker', () => {
  it('accepts a correct history and counts what it saw', () => {
    const report = checkAlockEvents(good, budgets);
    expect(report.violations).toEqual([]);
    expect(report.entries).toEqual({ leader: 2, passed: 1, reacquired: 0 });
    expect(report.headWaits).toBe(2);
    expect(report.maxOvertakes).toBe(1);
  });

  it('I1: flags a second holder', () => {
    const overlap = [...good.slice(0, 3), remote(R1, { type: 'enter', kind: 'leader', budget: 2, pred: 0n })];
    expect(checkAlockEvents(overlap, budgets).violations[0]).toMatch(/^I1 .* entered while/);
  });

  it('I5: flags a hand-off that does not give exactly one less budget, and a re-acquire without budget 0', () => {
    const wrongBudget = replace(good, 9, local(L2, { type: 'enter', kind: 'passed', budget: 2, pred: L1 }));
    expect(checkAlockEvents(wrongBudget, budgets).violations[0]).toMatch(/^I5 /);
    const earlyReacquire = replace(good, 9, local(L2, { type: 'enter', kind: 'reacquired', budget: 2, pred: L1 }));
    expect(checkAlockEvents(earlyReacquire, budgets).violations[0]).toMatch(/^I5 .*re-acquired/);
  });

  it('I6: flags a head overtaken by more entries of the other class than its budget', () => {
    const L3 = encodeRef({ node: 0, client: 5, index: 0 });
    const L4 = encodeRef({ node: 0, client: 6, index: 0 });
    const unfair: AlockEvent[] = [
      ...good.slice(0, 7),
      local(L1, { type: 'exit' }),
      local(L1, { type: 'handoff', to: L2, budget: 1 }),
      local(L2, { type: 'enter', kind: 'passed', budget: 1, pred: L1 }),
      local(L3, { type: 'swap', pred: L2 }),
      local(L3, { type: 'link', pred: L2 }),
      local(L2, { type: 'exit' }),
      local(L2, { type: 'handoff', to: L3, budget: 0 }),
      // L3 should re-arbitrate (victim = local) and let R1 in; instead it enters directly.
      local(L3, { type: 'enter', kind: 'reacquired', budget: 2, pred: L2 }),
      local(L4, { type: 'swap', pred: L3 }),
      local(L4, { type: 'link', pred: L3 }),
      local(L3, { type: 'exit' }),
      local(L3, { type: 'handoff', to: L4, budget: 1 }),
      local(L4, { type: 'enter', kind: 'passed', budget: 1, pred: L3 }),
    ];
    // Two local entries after R1's victim write are within budget 2; the third is not.
    expect(checkAlockEvents(unfair.slice(0, -5), budgets).violations).toEqual([]);
    const report = checkAlockEvents(unfair, budgets);
    expect(report.violations[0]).toMatch(/^I6 .*3th local entry while remote head/);
  });

  it('I7: flags a hand-off from someone other than the previous holder of the class', () => {
    const skipped = replace(good, 9, local(L2, { type: 'enter', kind: 'passed', budget: 1, pred: R2 }));
    expect(checkAlockEvents(skipped, budgets).violations[0]).toMatch(/^I7 /);
  });

  it('I10: flags a releaser clearing its tail with a successor linked behind it, or handing to someone else', () => {
    const lost = replace(good, 8, local(L1, { type: 'emptied' }));
    expect(checkAlockEvents(lost, budgets).violations[0]).toMatch(/^I10 .*cleared its tail/);
    const misdirected = replace(good, 8, local(L1, { type: 'handoff', to: R2, budget: 1 }));
    expect(checkAlockEvents(misdirected, budgets).violations[0]).toMatch(/^I10 .*handed over/);
  });
});
