import { withRefGeneration } from '../../src/index.js';
import type { AlockEvent, EntryKind } from '../../src/index.js';

/**
 * Checks ALock's runtime invariants (spec §4.2) over the protocol steps its clients report.
 *
 *  I1  at most one holder per lock (enter … exit), timed-out acquisitions included
 *  I5  budgets: a leader or re-acquirer holds the class budget B; a hand-off gives exactly one less
 *      than the giver held, at least 1 for `passed` and 0 before `reacquired`
 *  I6  bounded overtaking: once a cohort head has written victim, at most B(other class) entries of
 *      the other class happen before it enters
 *  I7  FIFO within a class: every `passed`/`reacquired` holder's predecessor is the previous holder
 *      of its class; a `leader` has none
 *  I10 no lost successor: a process that linked behind a predecessor is handed the lock by exactly
 *      that predecessor, which never clears its tail or reuses its descriptor in between
 *
 * Events are reported by the acting process in causal order (see `AlockEvent`), so every rule
 * below holds for any correct execution; a violation names the rule and the descriptors involved.
 */
export interface InvariantOptions {
  readonly localBudget: number;
  readonly remoteBudget: number;
}

export interface InvariantReport {
  readonly ok: boolean;
  readonly violations: readonly string[];
  readonly entries: Record<EntryKind, number>;
  /** Heads that wrote victim and later entered. */
  readonly headWaits: number;
  /** Most other-class entries seen while one head waited (I6 requires ≤ the other class's budget). */
  readonly maxOvertakes: number;
  readonly abandoned: number;
}

type ClassName = AlockEvent['cls'];

interface Head {
  readonly ref: bigint;
  overtakes: number;
  reported: boolean;
}

interface LockState {
  holder: bigint | undefined;
  readonly last: Record<ClassName, { ref: bigint; budget: number } | undefined>;
  readonly head: Record<ClassName, Head | undefined>;
  /** predecessor ref → the successor that linked behind it and has not been handed the lock yet. */
  readonly linked: Map<bigint, bigint>;
}

const MAX_VIOLATIONS = 20;

export function checkAlockEvents(events: readonly AlockEvent[], options: InvariantOptions): InvariantReport {
  const budgetOf = (cls: ClassName) => (cls === 'local' ? options.localBudget : options.remoteBudget);
  const other = (cls: ClassName): ClassName => (cls === 'local' ? 'remote' : 'local');
  const locks = new Map<number, LockState>();
  const violations: string[] = [];
  const entries: Record<EntryKind, number> = { leader: 0, passed: 0, reacquired: 0 };
  let headWaits = 0;
  let maxOvertakes = 0;
  let abandoned = 0;
  const fail = (event: AlockEvent, rule: string, detail: string) => {
    if (violations.length < MAX_VIOLATIONS) violations.push(`${rule} lock ${event.lock}: ${event.cls} ${ref(event.ref)} ${detail}`);
  };
  const stateOf = (lock: number): LockState => {
    let state = locks.get(lock);
    if (!state) {
      state = { holder: undefined, last: { local: undefined, remote: undefined }, head: { local: undefined, remote: undefined }, linked: new Map() };
      locks.set(lock, state);
    }
    return state;
  };

  for (const event of events) {
    const s = stateOf(event.lock);
    switch (event.type) {
      case 'swap':
        if (s.linked.has(event.ref)) fail(event, 'I10', `reused its descriptor while ${ref(s.linked.get(event.ref)!)} still waited behind it`);
        break;
      case 'link':
        if (s.linked.has(event.pred)) fail(event, 'I10', `linked behind ${ref(event.pred)}, which ${ref(s.linked.get(event.pred)!)} had already linked behind`);
        s.linked.set(event.pred, event.ref);
        break;
      case 'victim':
        s.head[event.cls] = { ref: event.ref, overtakes: 0, reported: false };
        break;
      case 'enter': {
        entries[event.kind]++;
        if (s.holder !== undefined) fail(event, 'I1', `entered while ${ref(s.holder)} held the lock`);
        s.holder = event.ref;
        const B = budgetOf(event.cls);
        const prev = s.last[event.cls];
        if (event.kind === 'leader') {
          if (event.pred !== 0n) fail(event, 'I7', `entered as leader with predecessor ${ref(event.pred)}`);
          if (event.budget !== B) fail(event, 'I5', `leader holds budget ${event.budget}, expected ${B}`);
        } else {
          if (!prev || prev.ref !== event.pred) {
            fail(event, 'I7', `was handed the lock by ${ref(event.pred)} but the previous ${event.cls} holder was ${prev ? ref(prev.ref) : 'none'}`);
          }
          const handed = prev ? prev.budget - 1 : undefined;
          if (event.kind === 'passed' && (handed === undefined || event.budget !== handed || event.budget < 1)) {
            fail(event, 'I5', `entered passed with budget ${event.budget}, predecessor held ${prev?.budget ?? 'none'}`);
          }
          if (event.kind === 'reacquired' && (handed !== 0 || event.budget !== B)) {
            fail(event, 'I5', `re-acquired with budget ${event.budget} after being handed ${handed ?? 'nothing'}`);
          }
        }
        s.last[event.cls] = { ref: event.ref, budget: event.budget };
        const mine = s.head[event.cls];
        if (mine?.ref === event.ref) {
          headWaits++;
          s.head[event.cls] = undefined;
        }
        const waiting = s.head[other(event.cls)];
        if (waiting) {
          waiting.overtakes++;
          maxOvertakes = Math.max(maxOvertakes, waiting.overtakes);
          if (waiting.overtakes > B && !waiting.reported) {
            waiting.reported = true;
            fail(event, 'I6', `was the ${waiting.overtakes}th ${event.cls} entry while ${other(event.cls)} head ${ref(waiting.ref)} waited (budget ${B})`);
          }
        }
        break;
      }
      case 'exit':
        if (s.holder !== event.ref) fail(event, 'I1', `exited but the holder was ${s.holder === undefined ? 'none' : ref(s.holder)}`);
        s.holder = undefined;
        break;
      case 'handoff': {
        const successor = s.linked.get(event.ref);
        // A link carries the predecessor's generation, not the successor's own: compare descriptors.
        if (successor === undefined || withRefGeneration(successor, 0) !== withRefGeneration(event.to, 0)) fail(event, 'I10', `handed over to ${ref(event.to)} but ${successor === undefined ? 'nobody' : ref(successor)} had linked behind it`);
        s.linked.delete(event.ref);
        break;
      }
      case 'emptied':
        if (s.linked.has(event.ref)) fail(event, 'I10', `cleared its tail with ${ref(s.linked.get(event.ref)!)} linked behind it`);
        break;
      case 'cut':
        // The releaser gave up on its unlinked successor: whoever linked behind it is cut off.
        s.linked.delete(event.ref);
        break;
      case 'abandon':
        abandoned++;
        break;
    }
  }
  return { ok: violations.length === 0, violations, entries, headWaits, maxOvertakes, abandoned };
}

function ref(value: bigint): string {
  const client = Number((value >> 8n) & 0xffff_ffffn);
  const node = Number(value >> 40n) - 1;
  return `${node}/${client}#${Number(value & 0xffn)}`;
}
