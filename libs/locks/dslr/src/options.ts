import { OptionReader } from '@lockfabric/locks-common';
import type { ProtocolOptions } from '@lockfabric/locks-common';
import { ConfigError } from '@lockfabric/ports';
import { WordLayout } from './lock-word.js';
import type { LayoutName } from './lock-word.js';

export type PollingMode = 'dynamic' | 'busy';

/** Every DSLR knob (spec §3), with the paper-literal switches of spec §15 (all off by default). */
export interface DslrOptions {
  /** λ: lease of a one-slot grant, measured on the holder's own clock. */
  readonly leaseNs: number;
  /** ω: poll wait per ticket ahead (dynamic interval polling). */
  readonly waitUnitNs: number;
  /** `dynamic`: sleep wait_count·ω, clamped to [ω, λ/2], between polls; `busy`: poll back to back (A.7). */
  readonly polling: PollingMode;
  /** R and Lcap of the truncated binary exponential backoff after a bounce or an abort (§7.4). */
  readonly backoffBaseNs: number;
  readonly backoffCapNs: number;
  /** `update` selects the six-field word that carries update locks (§10). */
  readonly layout: LayoutName;
  /** COUNT_MAX; below the paper's value only to exercise resets in tests. */
  readonly counterLimit: number;
  /** k_max: 1 is fixed-lease mode; above 1 enables multi-slot leasing (§9). */
  readonly maxSlots: number;
  /** Slots per ticket when an acquire does not say. */
  readonly slots: number;
  /** After a skip or a reset invalidates the ticket: back off and draw again instead of failing. */
  readonly restartOnAbort: boolean;
  /** A1: shared waiters also fail on nS > ticket.maxS. */
  readonly paperLiteralSharedCheck: boolean;
  /** A2: a shared skip sets nS = ticket.maxS + k, counting earlier readers as released. */
  readonly paperLiteralSharedSkip: boolean;
  /** A3: withdraw a bounced increment with FAA(−k) instead of a CAS that stops at a reset. */
  readonly paperLiteralFaaWithdraw: boolean;
  /** A4: after any skip that leaves a max counter at the limit, zero the word at once. */
  readonly paperLiteralZeroAfterSkip: boolean;
  /** A5: the resetter releases with FAA even past its lease, then repeats CAS(ResetFrom, 0) until it succeeds. */
  readonly paperLiteralResetterRelease: boolean;
  /**
   * Release with the paper's single FAA instead of the fenced CAS: cheaper, but a release decided
   * inside the lease and delayed past a skip (a paused client) lands on someone else's ticket.
   */
  readonly paperLiteralFaaRelease: boolean;
  /** A6: declare a stall when either now-counter stood still for the threshold (not both). */
  readonly paperLiteralStallOnEither: boolean;
  /** A9: stall threshold 2λ whatever the slots ahead. */
  readonly paperLiteralFixedStallThreshold: boolean;
  /** A10: the resetter is the ticket with prev(max) == COUNT_MAX−1 only. */
  readonly paperLiteralResetterTest: boolean;
  /** A11: a bounce off a frozen word fails the acquire instead of retrying it after the backoff. */
  readonly paperLiteralAbortOnBounce: boolean;
  /** A16: a waiter that times out abandons its ticket instead of releasing it once granted. */
  readonly paperLiteralAbandonTicket: boolean;
  /** Test-only mutant: waiters do not notice that the word went backwards (a reset). */
  readonly mutantNoGenerationCheck: boolean;
  readonly mutantNoBlindCheck: boolean;
  /** Test-only mutant: a bouncer backs off as far as Appendix A.3's cap allows, gaps in its watch of a frozen word included. */
  readonly mutantUnclampedBounceBackoff: boolean;
}

export const DSLR_OPTION_HELP: Readonly<Record<string, string>> = {
  leaseNs: 'λ, lease of a one-slot grant in ns (default 10000000); waiters skip after 2λ without counter movement',
  waitUnitNs: 'ω, poll wait per ticket ahead in ns (default 2000, about one verb round trip in sim)',
  polling: 'dynamic (default): sleep wait_count·ω between READs; busy: READ back to back',
  backoffBaseNs: 'R, first bound of the random backoff after a bounce or abort, in ns (default 10000)',
  backoffCapNs: 'Lcap, cap of that backoff in ns (default 10000000)',
  updateLocks: 'true for the six-field word with update locks (10-bit counters, limit 512)',
  counterLimit: 'COUNT_MAX (default 32768, or 512 with update locks); smaller values make resets frequent',
  maxSlots: 'k_max (default 1 = fixed lease); above 1 enables multi-slot leasing, lease k·λ',
  slots: 'slots per ticket when an acquire does not say (default 1)',
  restartOnAbort: 'true: after a skip or reset, back off and draw a new ticket instead of failing',
  paperLiteral: 'true turns every paperLiteral* switch on (the paper as printed)',
  paperLiteralSharedCheck: 'A1: shared waiters fail on nS > ticket.maxS',
  paperLiteralSharedSkip: 'A2: shared skip sets nS = ticket.maxS + k',
  paperLiteralFaaWithdraw: 'A3: withdraw a bounced ticket with FAA(−k)',
  paperLiteralZeroAfterSkip: 'A4: zero the word after a skip whenever a max counter is at the limit',
  paperLiteralResetterRelease: 'A5: resetter releases with FAA past its lease and CASes until it succeeds',
  paperLiteralFaaRelease: 'release with one FAA (the paper) instead of the CAS fenced on the ticket still being held',
  paperLiteralStallOnEither: 'A6: stall when either now-counter is still',
  paperLiteralFixedStallThreshold: 'A9: stall threshold fixed at 2λ with multi-slot leases',
  paperLiteralResetterTest: 'A10: resetter only when prev(max) == COUNT_MAX−1',
  paperLiteralAbortOnBounce: 'A11: fail the acquire on a bounce off a frozen word',
  paperLiteralAbandonTicket: 'A16: abandon the ticket of a timed-out waiter',
  mutantNoGenerationCheck: 'test-only: waiters ignore resets of the word',
  mutantNoBlindCheck: 'test-only: a waiter that saw nothing of the word for longer than a skip takes its next sighting at face value',
  mutantUnclampedBounceBackoff: 'test-only: back off after a bounce beyond λ, so a lone bouncer never watches a frozen word long enough to zero it',
};

/** Options that only the dslr protocol reads (dslr-backoff paces polls its own way). */
export interface ReadDslrOptionsConfig {
  readonly polling: boolean;
}

/** Reads DSLR's options from `reader` without finishing it, so a variant can add its own. */
export function readDslrOptionsFrom(reader: OptionReader, config: ReadDslrOptionsConfig = { polling: true }): DslrOptions {
  const layout: LayoutName = reader.boolean('updateLocks', false) ? 'update' : 'standard';
  const literal = reader.boolean('paperLiteral', false);
  const maxSlots = reader.number('maxSlots', 1, { min: 1, max: 64, integer: true });
  const options: DslrOptions = {
    leaseNs: reader.number('leaseNs', 10_000_000, { min: 1_000 }),
    waitUnitNs: reader.number('waitUnitNs', 2_000, { min: 1 }),
    polling: config.polling ? reader.choice('polling', ['dynamic', 'busy'] as const, 'dynamic') : 'dynamic',
    backoffBaseNs: reader.number('backoffBaseNs', 10_000, { min: 1 }),
    backoffCapNs: reader.number('backoffCapNs', 10_000_000, { min: 1 }),
    layout,
    counterLimit: reader.number('counterLimit', WordLayout.defaultLimit(layout), { min: 2, max: WordLayout.defaultLimit(layout), integer: true }),
    maxSlots,
    slots: reader.number('slots', 1, { min: 1, max: 64, integer: true }),
    restartOnAbort: reader.boolean('restartOnAbort', false),
    paperLiteralSharedCheck: reader.boolean('paperLiteralSharedCheck', literal),
    paperLiteralSharedSkip: reader.boolean('paperLiteralSharedSkip', literal),
    paperLiteralFaaWithdraw: reader.boolean('paperLiteralFaaWithdraw', literal),
    paperLiteralZeroAfterSkip: reader.boolean('paperLiteralZeroAfterSkip', literal),
    paperLiteralResetterRelease: reader.boolean('paperLiteralResetterRelease', literal),
    paperLiteralFaaRelease: reader.boolean('paperLiteralFaaRelease', literal),
    paperLiteralStallOnEither: reader.boolean('paperLiteralStallOnEither', literal),
    paperLiteralFixedStallThreshold: reader.boolean('paperLiteralFixedStallThreshold', literal),
    paperLiteralResetterTest: reader.boolean('paperLiteralResetterTest', literal),
    paperLiteralAbortOnBounce: reader.boolean('paperLiteralAbortOnBounce', literal),
    paperLiteralAbandonTicket: reader.boolean('paperLiteralAbandonTicket', literal),
    mutantNoGenerationCheck: reader.boolean('mutantNoGenerationCheck', false),
    mutantNoBlindCheck: reader.boolean('mutantNoBlindCheck', false),
    mutantUnclampedBounceBackoff: reader.boolean('mutantUnclampedBounceBackoff', false),
  };
  return options;
}

/** Problems `readDslrOptionsFrom` cannot see field by field. */
export function crossCheckDslrOptions(options: DslrOptions): string[] {
  const problems: string[] = [];
  if (options.slots > options.maxSlots) problems.push(`dslr option slots (${options.slots}) exceeds maxSlots (${options.maxSlots})`);
  if (options.backoffCapNs < options.backoffBaseNs) problems.push(`dslr option backoffCapNs (${options.backoffCapNs}) is below backoffBaseNs (${options.backoffBaseNs})`);
  return problems;
}

export function readDslrOptions(options?: ProtocolOptions): DslrOptions {
  const reader = new OptionReader('dslr', options);
  const parsed = readDslrOptionsFrom(reader);
  reader.done();
  const problems = crossCheckDslrOptions(parsed);
  if (problems.length > 0) throw new ConfigError(problems);
  return parsed;
}
