import { smallBankStream } from '@lockfabric/workloads';
import type { SmallBankWorkloadSpec } from '@lockfabric/workloads';

/** A committed transaction as the transaction log names it: the client's seq-th transaction. */
export interface CommittedRef {
  readonly client: string;
  readonly seq: number;
}

/**
 * What the committed transactions must have done to each account: every client's stream is a
 * pure function of (seed, client key), so the n-th transaction's transfer is known again here.
 */
export function expectedDeltas(workload: SmallBankWorkloadSpec, accounts: number, seed: number, committed: readonly CommittedRef[]): { deltas: Map<number, number>; transfers: number } {
  const byClient = new Map<string, number[]>();
  for (const c of committed) {
    let seqs = byClient.get(c.client);
    if (!seqs) byClient.set(c.client, (seqs = []));
    seqs.push(c.seq);
  }
  const deltas = new Map<number, number>();
  let transfers = 0;
  const add = (account: number, amount: number) => deltas.set(account, (deltas.get(account) ?? 0) + amount);
  for (const [client, seqs] of byClient) {
    const wanted = new Set(seqs);
    const last = Math.max(...seqs);
    const stream = smallBankStream(accounts, seed, client, workload.mutantSkipLock === true);
    for (let seq = 0; seq <= last; seq++) {
      const t = stream.next();
      if (!wanted.has(seq) || !t.transfer) continue;
      transfers++;
      add(t.transfer.from, -t.transfer.amount);
      add(t.transfer.to, t.transfer.amount);
    }
  }
  return { deltas, transfers };
}

/** The end-of-run SmallBank invariant (reported in `transactions.smallbank`). */
export interface SmallBankCheck {
  readonly accounts: number;
  readonly committedTransfers: number;
  readonly expectedTotal: number;
  readonly total: number;
  /** The sum of all balances is what it was before the run. */
  readonly conserved: boolean;
  /** Accounts whose balance is not initial + the committed transfers' delta (lost or phantom updates). */
  readonly mismatchedAccounts: number;
  /** Up to 10 mismatches, `account N: balance B, expected E`. */
  readonly examples: readonly string[];
  readonly ok: boolean;
}

/** Checks conservation and that every committed transfer is visible in the final balances. */
export function checkSmallBank(balances: ArrayLike<number>, initial: number, deltas: ReadonlyMap<number, number>, committedTransfers: number): SmallBankCheck {
  let total = 0;
  let mismatched = 0;
  const examples: string[] = [];
  for (let a = 0; a < balances.length; a++) {
    const balance = balances[a]!;
    total += balance;
    const expected = initial + (deltas.get(a) ?? 0);
    if (balance !== expected) {
      mismatched++;
      if (examples.length < 10) examples.push(`account ${a}: balance ${Number.isNaN(balance) ? 'missing' : balance}, expected ${expected}`);
    }
  }
  const expectedTotal = initial * balances.length;
  const conserved = total === expectedTotal;
  return { accounts: balances.length, committedTransfers, expectedTotal, total, conserved, mismatchedAccounts: mismatched, examples, ok: conserved && mismatched === 0 };
}
