import { describe, expect, it } from 'vitest';
import { SMALLBANK_INITIAL_BALANCE, smallBankStream } from '@lockfabric/workloads';
import { checkSmallBank, expectedDeltas } from './conservation.js';

const initial = SMALLBANK_INITIAL_BALANCE;
const spec = { kind: 'smallbank' as const, accounts: 50 };

/** Applies committed transactions to balances the way the store does (the correct outcome). */
function applied(accounts: number, committed: { client: string; seq: number }[], seed: number): Float64Array {
  const balances = new Float64Array(accounts).fill(initial);
  for (const client of new Set(committed.map((c) => c.client))) {
    const seqs = new Set(committed.filter((c) => c.client === client).map((c) => c.seq));
    const stream = smallBankStream(accounts, seed, client);
    for (let seq = 0; seq <= Math.max(...seqs); seq++) {
      const t = stream.next();
      if (seqs.has(seq) && t.transfer) {
        balances[t.transfer.from]! -= t.transfer.amount;
        balances[t.transfer.to]! += t.transfer.amount;
      }
    }
  }
  return balances;
}

describe('SmallBank stream', () => {
  it('draws 15 % balance checks (one shared lock) and transfers (two exclusive locks, ascending, distinct)', () => {
    const stream = smallBankStream(1000, 1, '1/0');
    let balance = 0;
    for (let i = 0; i < 4_000; i++) {
      const t = stream.next();
      if (t.type === 'BALANCE') {
        balance++;
        expect(t.locks).toEqual([{ lock: t.account, mode: 'shared' }]);
      } else {
        const { from, to, amount } = t.transfer!;
        expect(from).not.toBe(to);
        expect(amount).toBeGreaterThanOrEqual(1);
        expect(t.locks).toEqual([{ lock: Math.min(from, to), mode: 'exclusive' }, { lock: Math.max(from, to), mode: 'exclusive' }]);
      }
    }
    expect(balance / 4_000).toBeGreaterThan(0.14);
    expect(balance / 4_000).toBeLessThan(0.16);
  });

  it('the skip-lock mutant locks only the lower account of a transfer', () => {
    const stream = smallBankStream(1000, 1, '1/0', true);
    for (let i = 0; i < 100; i++) {
      const t = stream.next();
      if (t.transfer) expect(t.locks).toEqual([{ lock: Math.min(t.transfer.from, t.transfer.to), mode: 'exclusive' }]);
    }
  });
});

describe('checkSmallBank', () => {
  const committed = [0, 1, 2, 5, 9].map((seq) => ({ client: '1/0', seq })).concat([0, 3].map((seq) => ({ client: '2/1', seq })));
  const { deltas, transfers } = expectedDeltas(spec, 50, 7, committed);

  it('accepts balances that are exactly the committed transfers applied', () => {
    const check = checkSmallBank(applied(50, committed, 7), initial, deltas, transfers);
    expect(check).toMatchObject({ ok: true, conserved: true, mismatchedAccounts: 0, total: 50 * initial, expectedTotal: 50 * initial });
    expect(transfers).toBeGreaterThan(0);
  });

  it('a lost update (one side of a transfer overwritten) breaks conservation and is reported', () => {
    const balances = applied(50, committed, 7);
    const touched = [...deltas.keys()][0]!;
    balances[touched] = initial; // as if a concurrent write overwrote the committed change
    const check = checkSmallBank(balances, initial, deltas, transfers);
    expect(check.ok).toBe(false);
    expect(check.conserved).toBe(false);
    expect(check.mismatchedAccounts).toBe(1);
    expect(check.examples[0]).toContain(`account ${touched}:`);
  });

  it('a committed transfer that is not visible is caught even though the sum is conserved', () => {
    // Drop the first committed transfer from what reached Redis: the sum stays, two accounts differ.
    const isTransfer = (ref: { client: string; seq: number }) => expectedDeltas(spec, 50, 7, [ref]).transfers === 1;
    const dropped = committed.find(isTransfer)!;
    const check = checkSmallBank(applied(50, committed.filter((c) => c !== dropped), 7), initial, deltas, transfers);
    expect(check.conserved).toBe(true);
    expect(check.ok).toBe(false);
    expect(check.mismatchedAccounts).toBe(2);
  });

  it('a missing account is a mismatch', () => {
    const balances = applied(50, committed, 7);
    balances[3] = Number.NaN;
    const check = checkSmallBank(balances, initial, deltas, transfers);
    expect(check.ok).toBe(false);
    expect(check.examples.some((e) => e.startsWith('account 3: balance missing'))).toBe(true);
  });
});
