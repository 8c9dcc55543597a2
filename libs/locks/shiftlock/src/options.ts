import { OptionReader } from '@lockfabric/locks-common';
import type { ProtocolOptions } from '@lockfabric/locks-common';
import { ConfigError } from '@lockfabric/ports';
import { MAX_CLIENT, MAX_SLOTS } from './tail-pointer.js';

/** How a waiter that saw RelCnt stand still for 3 × T_lease gets the lock reset (spec §4.3). */
export type RecoveryMode = 'server' | 'one-sided' | 'off';

export interface ShiftLockOptions {
  /** N: most consecutive writer holders per writer phase before the lock goes to readers (∞ allowed). */
  readonly consecutiveWriters: number;
  /** T_lease: longest a client may hold the lock; also the unit of failure detection. */
  readonly leaseNs: number;
  /** δ: bound on relative clock-rate drift; every intended wait T is waited as (1+δ)·T. */
  readonly clockDrift: number;
  /** Pause between remote polls (readers on the entry, writers on RelCnt); 0 polls back to back. */
  readonly pollIntervalNs: number;
  /** K: receive endpoints per client, i.e. locks a client may hold or wait for as a writer at once. */
  readonly endpoints: number;
  readonly recovery: RecoveryMode;
  /** Client number of the recovery server on every memory node; its descriptor slot holds the eras. */
  readonly recoveryClient: number;
  /** Era counters per memory node (A10), chosen by a hash of the lock's slot; at most 8 (one descriptor slot). */
  readonly eraBuckets: number;
  /** A2: bump RelCnt at writer-to-writer handover (paper); false is the artifact's behaviour. */
  readonly handoverBumpsRelCnt: boolean;
  /** A3 `hardened`: transfer to readers by compare-guarded ExtCAS instead of ExtFAA. */
  readonly hardenedTransfer: boolean;
  /** A16: the artifact's two trivial ExtCAS attempts before enqueuing. */
  readonly trivialCas: boolean;
  /** A18: extra delay before a SEND to a client on the same node (evaluation fairness only). */
  readonly sameNodeDelayNs: number;
  /** A1 paper-literal: take Epoch from the enqueue snapshot (or 1 − it after ModeChanged), not from the message. */
  readonly paperLiteralEpoch: boolean;
  /** A8 (artifact order, test-only): a waiting reader tests Epoch before testing for a RelCnt leap. */
  readonly mutantEpochBeforeLeap: boolean;
  /** Test-only mutant: a writer that finds readers inside enters without waiting for them. */
  readonly mutantSkipReaderWait: boolean;
  /** Test-only mutant: a grant's lease starts when this process handles it, so a stale grant is taken. */
  readonly mutantStaleGrants: boolean;
}

export const SHIFTLOCK_OPTION_HELP: Readonly<Record<string, string>> = {
  consecutiveWriters: 'N, most consecutive writers per writer phase before readers get the lock (default 16; inf allowed)',
  leaseNs: 'T_lease in ns (default 10000000); failure detection fires after 3·T_lease without a release',
  clockDrift: 'δ, relative clock-rate drift bound (default 0.0001)',
  pollIntervalNs: 'pause between remote polls in ns (default 2000; 0 = busy polling)',
  endpoints: 'K, receive endpoints per client = locks one client may hold or queue for at once (default 16, max 16)',
  recovery: 'server (default: reset through the recovery server on the memory node), one-sided (client resets with era CAS + ExtCAS), off',
  recoveryClient: 'client number of the recovery server on each memory node (default 4095)',
  eraBuckets: 'era counters per memory node, 1..8 (default 1)',
  handoverBumpsRelCnt: 'true (default, paper): writer-to-writer handover bumps RelCnt; false (artifact) needs recovery=off',
  hardenedTransfer: 'true (default): transfer to readers with a compare-guarded ExtCAS (artifact), which refuses to flip a lock reset under a late holder; false: the paper\'s ExtFAA',
  trivialCas: 'true: two trivial ExtCAS attempts before enqueuing, as the artifact does (default false)',
  sameNodeDelayNs: 'delay before a SEND to a client on the same node (default 0)',
  paperLiteralEpoch: "test-only: the paper's Algorithm 2 epoch handling, which can leave readers stuck (spec A1)",
  mutantEpochBeforeLeap: 'test-only: readers test Epoch before the RelCnt leap, unsafe after a reset (spec A8)',
  mutantSkipReaderWait: 'test-only: writers do not wait for readers already inside (broken on purpose)',
  mutantStaleGrants: 'test-only: leases start when the client handles a grant, not at its evidence, and a stale grant is not checked (broken on purpose)',
};

export function readShiftLockOptions(options?: ProtocolOptions): ShiftLockOptions {
  const reader = new OptionReader('shiftlock', options);
  const parsed: ShiftLockOptions = {
    consecutiveWriters: reader.number('consecutiveWriters', 16, { min: 1, integer: true }),
    leaseNs: reader.number('leaseNs', 10_000_000, { min: 1_000 }),
    clockDrift: reader.number('clockDrift', 1e-4, { min: 0, max: 0.1 }),
    pollIntervalNs: reader.number('pollIntervalNs', 2_000, { min: 0 }),
    endpoints: reader.number('endpoints', MAX_SLOTS, { min: 1, max: MAX_SLOTS, integer: true }),
    recovery: reader.choice('recovery', ['server', 'one-sided', 'off'] as const, 'server'),
    recoveryClient: reader.number('recoveryClient', MAX_CLIENT, { min: 0, max: MAX_CLIENT, integer: true }),
    eraBuckets: reader.number('eraBuckets', 1, { min: 1, max: 8, integer: true }),
    handoverBumpsRelCnt: reader.boolean('handoverBumpsRelCnt', true),
    hardenedTransfer: reader.boolean('hardenedTransfer', true),
    trivialCas: reader.boolean('trivialCas', false),
    sameNodeDelayNs: reader.number('sameNodeDelayNs', 0, { min: 0 }),
    paperLiteralEpoch: reader.boolean('paperLiteralEpoch', false),
    mutantEpochBeforeLeap: reader.boolean('mutantEpochBeforeLeap', false),
    mutantSkipReaderWait: reader.boolean('mutantSkipReaderWait', false),
    mutantStaleGrants: reader.boolean('mutantStaleGrants', false),
  };
  reader.done();
  if (!parsed.handoverBumpsRelCnt && parsed.recovery !== 'off') {
    // Without the bump RelCnt stands still for up to N writer holds, and the detector could reset a lock a live writer holds (A2).
    throw new ConfigError(['shiftlock option handoverBumpsRelCnt=false needs recovery=off: failure detection relies on RelCnt moving at every handover']);
  }
  return parsed;
}
