import { StreamRandom, streamSeed } from './rng.js';
import type { TxnTemplate } from './types.js';

/** ShiftLock Fig. 11 runs SmallBank over 1 M accounts. */
export const SMALLBANK_DEFAULT_ACCOUNTS = 1_000_000;
/** Every account opens with this balance (whole cents); only the sum and the deltas matter. */
export const SMALLBANK_INITIAL_BALANCE = 1_000_000;
/** ShiftLock §4.5 (Fig. 11): 15 % read-only balance checks, 85 % transfers. */
export const SMALLBANK_BALANCE_PERCENT = 15;
export const SMALLBANK_MAX_AMOUNT = 100;

/** Money moved by a transfer: `amount` from account `from` to account `to` (from ≠ to). */
export interface SmallBankTransfer {
  readonly from: number;
  readonly to: number;
  readonly amount: number;
}

/**
 * A SmallBank transaction: its lock set (account i is lock i) and what it does with balances.
 * A balance check reads one account under a shared lock; a transfer reads and writes two accounts
 * under exclusive locks, taken in ascending account order like every 2PL transaction here.
 */
export interface SmallBankTxn extends TxnTemplate {
  readonly type: 'BALANCE' | 'TRANSFER';
  readonly account?: number;
  readonly transfer?: SmallBankTransfer;
}

export const SMALLBANK_TYPES = ['BALANCE', 'TRANSFER'] as const;

/**
 * One client's SmallBank stream: deterministic in (seed, client key), so the driver can replay it
 * to learn what every committed transfer moved. `mutantSkipLock` (test-only) makes a transfer lock
 * only its lower account while still writing both: the conservation check must catch it.
 */
export function smallBankStream(accounts: number, seed: number, clientKey: string, mutantSkipLock = false): { next(): SmallBankTxn } {
  const random = new StreamRandom(streamSeed(seed, clientKey));
  return {
    next(): SmallBankTxn {
      if (random.int(100) < SMALLBANK_BALANCE_PERCENT || accounts < 2) {
        const account = random.int(accounts);
        return { type: 'BALANCE', account, locks: [{ lock: account, mode: 'shared' }] };
      }
      const from = random.int(accounts);
      const to = (from + 1 + random.int(accounts - 1)) % accounts;
      const amount = 1 + random.int(SMALLBANK_MAX_AMOUNT);
      const [low, high] = from < to ? [from, to] : [to, from];
      const locks = mutantSkipLock ? [{ lock: low, mode: 'exclusive' as const }] : [{ lock: low, mode: 'exclusive' as const }, { lock: high, mode: 'exclusive' as const }];
      return { type: 'TRANSFER', locks, transfer: { from, to, amount } };
    },
  };
}
