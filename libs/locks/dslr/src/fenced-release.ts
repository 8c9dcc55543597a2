import type { Counters, WordLayout } from './lock-word.js';
import { addWord } from './lock-word.js';
import type { LockWordAccess } from './lock-word-access.js';
import { stillHeld } from './ticket-rules.js';
import type { RequestKind } from './ticket-rules.js';

export interface FencedReleaseTicket {
  readonly kind: RequestKind;
  readonly t: Counters;
  readonly slots: number;
  /** The observation that showed the grant. */
  readonly seen: Counters;
  /** The word as the holder last knew it (with its own ticket drawn): the first CAS's guess. */
  readonly seenWord: bigint;
}

/**
 * A release that cannot land on a ticket it no longer owns (spec §8.2's hardening, checked before
 * the write instead of after it): CAS(v, v + add) for as long as the word `v` still shows the
 * ticket held (`stillHeld`), the first guess being the word as the holder last saw it.
 *
 * Why not the paper's FAA: an FAA decided inside the lease may reach the word arbitrarily later
 * (the client was paused between deciding and sending). If a waiter skipped the ticket meanwhile,
 * that FAA counts a release nobody owes and grants a later ticket alongside the current holder.
 * A CAS compares the whole word, which every skip and every reset changes, so a late CAS fails.
 * Uncontended it is one CAS; each ticket drawn since the guess costs one more.
 */
export async function fencedRelease(
  access: LockWordAccess,
  layout: WordLayout,
  ticket: FencedReleaseTicket,
  add: bigint,
  /** Told the running count as each CAS is issued (a span attribute that is right even mid-release). */
  onCas: (casCount: number) => void = () => undefined,
): Promise<FencedReleaseResult> {
  const { kind, t, slots, seen } = ticket;
  let guess = ticket.seenWord;
  for (let casCount = 1; ; casCount++) {
    onCas(casCount);
    const old = await access.cas(guess, addWord(guess, add));
    if (old === guess) return { outcome: 'released', casCount };
    if (!stillHeld(kind, t, slots, layout.decode(old), seen)) return { outcome: 'fenced', casCount };
    guess = old;
  }
}

export interface FencedReleaseResult {
  readonly outcome: 'released' | 'fenced';
  /** CAS verbs it took. */
  readonly casCount: number;
}
