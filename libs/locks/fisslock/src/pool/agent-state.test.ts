import { describe, expect, it } from 'vitest';
import type { LockPacket } from '@lockfabric/ports';
import { FLAG_ABORT, FLAG_BOUNCED, FLAG_CUR_SHARED, FLAG_DUP, FLAG_GRANTABLE, FLAG_GRANTED, FLAG_HAS_AGENT, FLAG_INVALID, FLAG_REACHED, FLAG_WW_NEXT, WAITER_COUNT_SHIFT, ackFlags } from '../wire.js';
import { NO_AGENT, step } from './agent-state.js';
import type { AgentEvent, AgentRules, AgentState, AgentValue, Step } from './agent-state.js';
import type { Waiter } from './agent.js';
import { NO_ANCHORS, anchorsFrom } from './lifetime-anchors.js';
import type { Anchors } from './lifetime-anchors.js';

// The agent's transitions (FissLock §4) with the exact state and actions each must give. The
// cases are data, so the same table also judges broken variants of `step` (the mutants below).

const HERE = 1;
const LID = 7;
type StepFn = (rules: AgentRules, lid: number, state: AgentState, event: AgentEvent) => Step;

const rules = (over: Partial<AgentRules> = {}): AgentRules => ({ machine: HERE, policy: 'read-preferring', parksHere: () => false, ...over });
const agent = (mode: 'shared' | 'exclusive', holders: string[], wqueue: Waiter[] = [], inca = 0, id = 5, anchors: Anchors = NO_ANCHORS): AgentValue => ({ id, mode, inca, holders: new Set(holders), wqueue, anchors });
const live = (a: AgentValue, parked = false): AgentState => ({ kind: 'live', agent: a, parked });
const pending = (a: AgentValue): AgentState => ({ kind: 'pending', agent: a });
const w = (mid: number, task: number, mode: 'shared' | 'exclusive'): Waiter => ({ mid, task, mode });
const packet = (p: Partial<LockPacket> & Pick<LockPacket, 'type'>): LockPacket => ({ lock: LID, machine: 2, task: 20, mode: 'shared', incarnation: 0, seq: 9, flags: 0, ...p });

interface Case {
  readonly name: string;
  readonly rules?: AgentRules;
  readonly state: AgentState;
  readonly event: AgentEvent;
  readonly expect: Step;
}

const CASES: readonly Case[] = [
  {
    name: '④ a shared request on a shared agent is granted here, no packet',
    state: live(agent('shared', ['1:10'])),
    event: { type: 'local-acquire', task: 11, mode: 'shared' },
    expect: { outcome: 'granted', state: live(agent('shared', ['1:10', '1:11'])), actions: [{ kind: 'count', counter: 'localGrants' }] },
  },
  {
    name: '⑤ an exclusive request on a shared agent is queued here; the watchdog and the writer notice are armed',
    state: live(agent('shared', ['1:10'])),
    event: { type: 'local-acquire', task: 11, mode: 'exclusive' },
    expect: {
      outcome: 'queued',
      state: live(agent('shared', ['1:10'], [w(1, 11, 'exclusive')])),
      actions: [
        { kind: 'watch-waiter', agent: agent('shared', ['1:10'], [w(1, 11, 'exclusive')]) },
        { kind: 'starve-writer-queued', agent: agent('shared', ['1:10'], [w(1, 11, 'exclusive')]) },
      ],
    },
  },
  {
    name: '⑤ with a writer queued, a reader queues behind it unless the policy prefers readers',
    rules: rules({ policy: 'write-preferring' }),
    state: live(agent('shared', ['1:10'], [w(2, 30, 'exclusive')])),
    event: { type: 'local-acquire', task: 11, mode: 'shared' },
    expect: {
      outcome: 'queued',
      state: live(agent('shared', ['1:10'], [w(2, 30, 'exclusive'), w(1, 11, 'shared')])),
      actions: [
        { kind: 'watch-waiter', agent: agent('shared', ['1:10'], [w(2, 30, 'exclusive'), w(1, 11, 'shared')]) },
        { kind: 'starve-check', agent: agent('shared', ['1:10'], [w(2, 30, 'exclusive'), w(1, 11, 'shared')]) },
      ],
    },
  },
  {
    name: 'no agent here: the request goes to the switch',
    state: NO_AGENT,
    event: { type: 'local-acquire', task: 11, mode: 'shared' },
    expect: { outcome: 'no-agent', state: NO_AGENT, actions: [] },
  },
  {
    name: '② a GRANTED copy is counted: a holder, and one more incarnation (share-mode counting, §4.2)',
    state: live(agent('shared', ['1:10'], [], 3)),
    event: { type: 'acquire', packet: packet({ type: 'acquire', flags: FLAG_GRANTED }), givenUp: false },
    expect: { outcome: 'accepted', state: live(agent('shared', ['1:10', '2:20'], [], 4, 5, anchorsFrom(2, 9))), actions: [{ kind: 'grant-counted', mid: 2, task: 20 }] },
  },
  {
    name: '② a copy for a task of this machine arms the orphaned-holder check',
    state: live(agent('shared', ['1:10'], [], 3)),
    event: { type: 'acquire', packet: packet({ type: 'acquire', machine: HERE, task: 12, flags: FLAG_GRANTED }), givenUp: false },
    expect: { outcome: 'accepted', state: live(agent('shared', ['1:10', '1:12'], [], 4, 5, anchorsFrom(HERE, 9))), actions: [{ kind: 'grant-counted', mid: HERE, task: 12 }, { kind: 'watch-local-holder', holder: '1:12' }] },
  },
  {
    name: '② a copy whose abort was answered first is counted and released at once (pool/given-up.ts)',
    state: live(agent('shared', ['1:10'], [], 3)),
    event: { type: 'acquire', packet: packet({ type: 'acquire', flags: FLAG_GRANTED }), givenUp: true },
    expect: { outcome: 'accepted', state: live(agent('shared', ['1:10'], [], 4, 5, anchorsFrom(2, 9))), actions: [{ kind: 'grant-counted', mid: 2, task: 20 }, { kind: 'count', counter: 'lateCopiesReleased' }] },
  },
  {
    name: '② a copy naming this machine as its home is counted',
    state: live(agent('shared', ['1:10'], [], 3)),
    event: { type: 'acquire', packet: packet({ type: 'acquire', incarnation: HERE + 1, flags: FLAG_GRANTED }), givenUp: false },
    expect: { outcome: 'accepted', state: live(agent('shared', ['1:10', '2:20'], [], 4, 5, anchorsFrom(2, 9))), actions: [{ kind: 'grant-counted', mid: 2, task: 20 }] },
  },
  {
    name: '② a copy naming another home is stale here: not counted, not bounced (swarm seed 236)',
    state: live(agent('shared', ['1:10'], [], 3)),
    event: { type: 'acquire', packet: packet({ type: 'acquire', incarnation: 3 + 1, agent: 3, flags: FLAG_GRANTED | FLAG_BOUNCED }), givenUp: false },
    expect: { outcome: 'duplicate', state: live(agent('shared', ['1:10'], [], 3)), actions: [{ kind: 'count', counter: 'foreignCopies' }] },
  },
  {
    name: '② a copy naming another home, no agent here: answered, not bounced on',
    state: NO_AGENT,
    event: { type: 'acquire', packet: packet({ type: 'acquire', incarnation: 3 + 1, agent: 3, flags: FLAG_GRANTED | FLAG_BOUNCED }), givenUp: false },
    expect: { outcome: 'duplicate', state: NO_AGENT, actions: [{ kind: 'count', counter: 'foreignCopies' }] },
  },
  {
    name: '② a copy reaching an exclusive agent is dropped as orphaned (wide seeds 16, 24, 27)',
    state: live(agent('exclusive', ['3:40'], [], 0)),
    event: { type: 'acquire', packet: packet({ type: 'acquire', flags: FLAG_GRANTED }), givenUp: false },
    expect: { outcome: 'duplicate', state: live(agent('exclusive', ['3:40'], [], 0)), actions: [{ kind: 'count', counter: 'orphanedCopies' }] },
  },
  {
    name: '③ a forwarded request is queued at the agent',
    state: live(agent('exclusive', ['1:10'])),
    event: { type: 'acquire', packet: packet({ type: 'acquire', mode: 'exclusive' }), givenUp: false },
    expect: {
      outcome: 'accepted',
      state: live(agent('exclusive', ['1:10'], [w(2, 20, 'exclusive')])),
      actions: [
        { kind: 'watch-waiter', agent: agent('exclusive', ['1:10'], [w(2, 20, 'exclusive')]) },
        { kind: 'starve-check', agent: agent('exclusive', ['1:10'], [w(2, 20, 'exclusive')]) },
      ],
    },
  },
  {
    name: '③ a DUP copy another machine bounced: the requester is told its request was recorded (REACHED, wide seed 55)',
    state: live(agent('exclusive', ['1:10'])),
    event: { type: 'acquire', packet: packet({ type: 'acquire', mode: 'exclusive', flags: FLAG_DUP, agent: 3 }), givenUp: false },
    expect: {
      outcome: 'accepted',
      state: live(agent('exclusive', ['1:10'], [w(2, 20, 'exclusive')])),
      actions: [
        { kind: 'watch-waiter', agent: agent('exclusive', ['1:10'], [w(2, 20, 'exclusive')]) },
        { kind: 'starve-check', agent: agent('exclusive', ['1:10'], [w(2, 20, 'exclusive')]) },
        { kind: 'send-reached', packet: { type: 'ack', lock: LID, machine: HERE, task: 20, mode: 'exclusive', incarnation: 0, seq: 0, flags: ackFlags('accepted') | FLAG_REACHED, dst: 2 } },
      ],
    },
  },
  {
    name: 'no agent here: a forwarded request bounces (the agent is on its way, §5.3)',
    state: NO_AGENT,
    event: { type: 'acquire', packet: packet({ type: 'acquire' }), givenUp: false },
    expect: { outcome: 'bounce', state: NO_AGENT, actions: [] },
  },
  {
    name: '⑥ a holder leaves while another holds: nothing to send',
    state: live(agent('shared', ['1:10', '2:20'])),
    event: { type: 'local-release', task: 10, switchShared: false },
    expect: { outcome: 'done', state: live(agent('shared', ['2:20'])), actions: [] },
  },
  {
    name: '⑦ the last holder leaves with nobody waiting: FREE back to the switch with the agent\'s incarnation; the agent is pending',
    state: live(agent('shared', ['1:10'], [], 6)),
    event: { type: 'local-release', task: 10, switchShared: false },
    expect: {
      outcome: 'done',
      state: pending(agent('shared', [], [], 6)),
      actions: [
        { kind: 'starve-stop' },
        { kind: 'send', packet: { type: 'free', lock: LID, machine: HERE, task: 0, mode: 'shared', incarnation: 6, flags: 0 }, ender: true, onAck: { kind: 'free-answered', id: 5 } },
      ],
    },
  },
  {
    name: '⑦ the FREE answered "freed": the agent is gone and the watchdog forgets the lock',
    state: pending(agent('shared', [], [], 6)),
    event: { type: 'free-answered', id: 5, freed: true },
    expect: { outcome: 'done', state: NO_AGENT, actions: [{ kind: 'watch-clear' }] },
  },
  {
    name: '⑦ an answer for an earlier agent of the lock changes nothing',
    state: pending(agent('shared', [], [], 6, 8)),
    event: { type: 'free-answered', id: 5, freed: true },
    expect: { outcome: 'ignored', state: pending(agent('shared', [], [], 6, 8)), actions: [] },
  },
  {
    name: '⑧ migration: the last holder leaves with a queue; the rest travels as entries, then the GRANT carrying the agent',
    state: live(agent('shared', ['1:10'], [w(2, 20, 'exclusive'), w(3, 30, 'shared'), w(3, 31, 'exclusive')], 2)),
    event: { type: 'local-release', task: 10, switchShared: false },
    expect: {
      outcome: 'done',
      state: pending(agent('shared', [], [w(2, 20, 'exclusive'), w(3, 30, 'shared'), w(3, 31, 'exclusive')], 2)),
      actions: [
        { kind: 'starve-stop' },
        { kind: 'send', packet: { type: 'transfer', lock: LID, machine: 3, task: 30, mode: 'shared', incarnation: 0, flags: 0, dst: 2 } },
        { kind: 'send', packet: { type: 'transfer', lock: LID, machine: 3, task: 31, mode: 'exclusive', incarnation: 1, flags: 0, dst: 2 } },
        {
          kind: 'send',
          packet: { type: 'grant', lock: LID, machine: 2, task: 20, mode: 'exclusive', incarnation: 2, flags: FLAG_HAS_AGENT | FLAG_CUR_SHARED | FLAG_WW_NEXT | (2 << WAITER_COUNT_SHIFT) },
          ender: true,
          onAck: { kind: 'grant-answered', id: 5 },
          handover: { next: w(2, 20, 'exclusive'), releaser: { from: '1/0', acquire: undefined } },
        },
      ],
    },
  },
  {
    name: '⑧ install: a shared agent arrives with its queue and grants the leading readers at once',
    state: NO_AGENT,
    event: { type: 'install', grant: packet({ type: 'grant', machine: HERE, task: 10, agent: 2, flags: FLAG_HAS_AGENT }), queue: [w(3, 30, 'shared'), w(2, 21, 'exclusive')], newId: 9, anchorSeq: 44 },
    expect: {
      outcome: 'done',
      state: live(agent('shared', ['1:10', '3:30'], [w(2, 21, 'exclusive')], 0, 9, anchorsFrom(HERE, 44))),
      actions: [
        { kind: 'count', counter: 'installs' },
        { kind: 'void-old-handoffs' },
        { kind: 'backoff-forget' },
        { kind: 'watch-clear' },
        { kind: 'stuck-restart' },
        { kind: 'send', packet: { type: 'grant', lock: LID, machine: 3, task: 30, mode: 'shared', incarnation: 0, flags: 0 } },
        { kind: 'starve-check', agent: agent('shared', ['1:10', '3:30'], [w(2, 21, 'exclusive')], 0, 9, anchorsFrom(HERE, 44)) },
        { kind: 'deliver', grant: packet({ type: 'grant', machine: HERE, task: 10, agent: 2, flags: FLAG_HAS_AGENT }) },
      ],
    },
  },
  {
    name: '⑧ refused: the pending agent comes back with the decider\'s incarnation and its grantee once at the head (wide seed 89)',
    state: pending(agent('shared', [], [w(2, 20, 'exclusive')], 2)),
    event: { type: 'refused', packet: packet({ type: 'grant', machine: 2, task: 20, mode: 'exclusive', incarnation: 3, flags: FLAG_INVALID | FLAG_HAS_AGENT | FLAG_CUR_SHARED, agent: HERE }), newId: 9, resent: false, movedOn: false },
    expect: { outcome: 'done', state: live(agent('shared', [], [w(2, 20, 'exclusive')], 3, 5, anchorsFrom(HERE, 9))), actions: [{ kind: 'count', counter: 'refusals' }, { kind: 'watch-refused' }] },
  },
  {
    name: 'a refused timeout-free leaves a pending agent to its own packet\'s answer (both-links seeds 370, 393)',
    state: pending(agent('exclusive', [], [], 1)),
    event: { type: 'refused', packet: packet({ type: 'free', machine: HERE, flags: FLAG_INVALID | FLAG_ABORT, agent: HERE }), newId: 9, resent: false, movedOn: false },
    expect: { outcome: 'ignored', state: pending(agent('exclusive', [], [], 1)), actions: [{ kind: 'count', counter: 'refusals' }] },
  },
  {
    name: 'a refused timeout-free with no agent here builds an empty one for the ② holders (§5.2)',
    state: NO_AGENT,
    event: { type: 'refused', packet: packet({ type: 'free', machine: HERE, mode: 'shared', incarnation: 4, flags: FLAG_INVALID | FLAG_ABORT, agent: HERE }), newId: 9, resent: false, movedOn: false },
    expect: { outcome: 'done', state: live(agent('shared', [], [], 0, 9, anchorsFrom(HERE, 9))), actions: [{ kind: 'count', counter: 'refusals' }, { kind: 'watch-refused' }] },
  },
  {
    name: 'a refusal never overwrites a live agent (§13.2)',
    state: live(agent('exclusive', ['1:10'])),
    event: { type: 'refused', packet: packet({ type: 'free', machine: HERE, flags: FLAG_INVALID, agent: HERE }), newId: 9, resent: false, movedOn: false },
    expect: { outcome: 'ignored', state: live(agent('exclusive', ['1:10'])), actions: [{ kind: 'count', counter: 'refusals' }] },
  },
  {
    name: '§13.4 write-off: a lost ② copy is counted with its release; with no holder left the agent FREEs',
    state: live(agent('shared', [], [], 2)),
    event: { type: 'write-off', packet: packet({ type: 'release', flags: FLAG_GRANTED }) },
    expect: {
      outcome: 'accepted',
      state: pending(agent('shared', [], [], 3)),
      actions: [
        { kind: 'count', counter: 'writtenOff' },
        { kind: 'grant-counted', mid: 2, task: 20 },
        { kind: 'starve-stop' },
        { kind: 'send', packet: { type: 'free', lock: LID, machine: HERE, task: 0, mode: 'shared', incarnation: 3, flags: 0 }, ender: true, onAck: { kind: 'free-answered', id: 5 } },
      ],
    },
  },
  {
    name: 'a ② RELEASE never removes a waiter of the same task (its DUP copy got here first): it waits for the copy',
    state: live(agent('shared', ['1:10'], [w(2, 20, 'shared')])),
    event: { type: 'release', packet: packet({ type: 'release', flags: FLAG_GRANTED }) },
    expect: { outcome: 'unmatched', state: live(agent('shared', ['1:10'], [w(2, 20, 'shared')])), actions: [] },
  },
  {
    name: 'parking (decision 0012): the last holder at the lock\'s home leaves with nobody waiting; the agent stays, no FREE',
    rules: rules({ parksHere: (lid) => lid === LID }),
    state: live(agent('exclusive', ['1:10'])),
    event: { type: 'local-release', task: 10, switchShared: false },
    expect: { outcome: 'done', state: live(agent('exclusive', []), true), actions: [{ kind: 'starve-stop' }, { kind: 'watch-clear' }, { kind: 'count', counter: 'parks' }] },
  },
  {
    name: 'parking: the home takes a parked lock in its mode without a packet',
    rules: rules({ parksHere: () => true }),
    state: live(agent('exclusive', []), true),
    event: { type: 'local-acquire', task: 11, mode: 'exclusive' },
    expect: { outcome: 'granted', state: live(agent('exclusive', ['1:11'])), actions: [{ kind: 'count', counter: 'localGrants' }, { kind: 'count', counter: 'parkedGrants' }] },
  },
  {
    name: 'parking: a request of the other mode FREEs the parked agent first and asks the switch (Lemma 1)',
    rules: rules({ parksHere: () => true }),
    state: live(agent('exclusive', [], [], 1), true),
    event: { type: 'local-acquire', task: 11, mode: 'shared' },
    expect: {
      outcome: 'no-agent',
      state: pending(agent('exclusive', [], [], 1)),
      actions: [
        { kind: 'starve-stop' },
        { kind: 'send', packet: { type: 'free', lock: LID, machine: HERE, task: 0, mode: 'exclusive', incarnation: 1, flags: 0 }, ender: true, onAck: { kind: 'free-answered', id: 5 } },
      ],
    },
  },
  {
    name: 'parking: a request from elsewhere (③) is handed the parked agent at once',
    rules: rules({ parksHere: () => true }),
    state: live(agent('exclusive', []), true),
    event: { type: 'acquire', packet: packet({ type: 'acquire', mode: 'exclusive' }), givenUp: false },
    expect: {
      outcome: 'accepted',
      state: pending(agent('exclusive', [], [w(2, 20, 'exclusive')])),
      actions: [
        { kind: 'starve-stop' },
        {
          kind: 'send',
          packet: { type: 'grant', lock: LID, machine: 2, task: 20, mode: 'exclusive', incarnation: 0, flags: FLAG_HAS_AGENT },
          ender: true,
          onAck: { kind: 'grant-answered', id: 5 },
          handover: { next: w(2, 20, 'exclusive'), releaser: undefined },
        },
      ],
    },
  },
  {
    name: 'a timeout-free answered freed releases the GRANT its task took silently meanwhile (swarm lossy seed 242)',
    state: live(agent('exclusive', ['1:11'], [], 0)),
    event: { type: 'abort-freed', task: 11 },
    expect: {
      outcome: 'done',
      state: pending(agent('exclusive', [], [], 0)),
      actions: [
        { kind: 'count', counter: 'swallowedReleased' },
        { kind: 'starve-stop' },
        { kind: 'send', packet: { type: 'free', lock: LID, machine: HERE, task: 0, mode: 'exclusive', incarnation: 0, flags: 0 }, ender: true, onAck: { kind: 'free-answered', id: 5 } },
      ],
    },
  },
  {
    name: 'a refusal of a resent FREE after which a lifetime may have begun here restores the agent without its anchors (wide seed 455)',
    state: pending(agent('shared', [], [], 2, 5, anchorsFrom(HERE, 3))),
    event: { type: 'refused', packet: packet({ type: 'free', machine: HERE, incarnation: 3, flags: FLAG_INVALID, agent: HERE }), newId: 9, resent: true, movedOn: true },
    expect: { outcome: 'done', state: live(agent('shared', [], [], 3)), actions: [{ kind: 'count', counter: 'refusals' }, { kind: 'watch-refused' }] },
  },
  {
    name: 'a duplicate the decider marks GRANTABLE, first sent within this lifetime, is counted as its lost ② grant (swarm lossy 24, 48)',
    state: live(agent('shared', ['1:10'], [], 1, 5, anchorsFrom(2, 15))),
    event: { type: 'acquire', packet: packet({ type: 'acquire', seq: 17, flags: FLAG_DUP | FLAG_GRANTABLE }), givenUp: false, requesterSeq: 17 },
    expect: {
      outcome: 'accepted',
      state: live(agent('shared', ['1:10', '2:20'], [], 2, 5, anchorsFrom(2, 15))),
      actions: [{ kind: 'stuck-write-off', packet: packet({ type: 'acquire', seq: 17, flags: FLAG_DUP | FLAG_GRANTABLE }) }, { kind: 'count', counter: 'dupGrantsCounted' }, { kind: 'grant-counted', mid: 2, task: 20 }],
    },
  },
  {
    name: 'a GRANTABLE duplicate first sent before this lifetime is only queued (nothing proves its grant was counted here)',
    state: live(agent('shared', ['1:10'], [], 1, 5, anchorsFrom(2, 15))),
    event: { type: 'acquire', packet: packet({ type: 'acquire', seq: 12, flags: FLAG_DUP | FLAG_GRANTABLE }), givenUp: false, requesterSeq: 12 },
    expect: {
      outcome: 'accepted',
      state: live(agent('shared', ['1:10'], [w(2, 20, 'shared')], 1, 5, anchorsFrom(2, 15))),
      actions: [
        { kind: 'watch-waiter', agent: agent('shared', ['1:10'], [w(2, 20, 'shared')], 1, 5, anchorsFrom(2, 15)) },
        { kind: 'starve-check', agent: agent('shared', ['1:10'], [w(2, 20, 'shared')], 1, 5, anchorsFrom(2, 15)) },
      ],
    },
  },
  {
    name: '② a counted copy (not DUP, not bounced) anchors its sender in this lifetime',
    state: live(agent('shared', ['1:10'], [], 0)),
    event: { type: 'acquire', packet: packet({ type: 'acquire', seq: 30, flags: FLAG_GRANTED }), givenUp: false },
    expect: { outcome: 'accepted', state: live(agent('shared', ['1:10', '2:20'], [], 1, 5, anchorsFrom(2, 30))), actions: [{ kind: 'grant-counted', mid: 2, task: 20 }] },
  },
  {
    name: 'a queued local waiter that gives up leaves the queue',
    state: live(agent('exclusive', ['2:20'], [w(1, 11, 'exclusive'), w(3, 30, 'shared')])),
    event: { type: 'local-abort', task: 11 },
    expect: { outcome: 'removed', state: live(agent('exclusive', ['2:20'], [w(3, 30, 'shared')])), actions: [] },
  },
];

/** The names of the cases `fn` gets wrong. */
function failures(fn: StepFn): string[] {
  const wrong: string[] = [];
  for (const c of CASES) {
    const got = fn(c.rules ?? rules(), LID, c.state, c.event);
    try {
      expect(got).toEqual(c.expect);
    } catch {
      wrong.push(c.name);
    }
  }
  return wrong;
}

describe('step: the FissLock agent as a state machine (§4)', () => {
  for (const c of CASES) {
    it(c.name, () => {
      expect(step(c.rules ?? rules(), LID, c.state, c.event)).toEqual(c.expect);
    });
  }

  it('is pure: the state it was given is unchanged', () => {
    const before = live(agent('shared', ['1:10'], [w(2, 20, 'exclusive')], 2));
    const copy = structuredClone(before);
    step(rules(), LID, before, { type: 'local-release', task: 10, switchShared: false });
    step(rules(), LID, before, { type: 'acquire', packet: packet({ type: 'acquire', flags: FLAG_GRANTED }), givenUp: false });
    expect(before).toEqual(copy);
  });
});

describe('the transition table catches broken variants of step (mutants)', () => {
  it('the real step passes every case', () => {
    expect(failures(step)).toEqual([]);
  });

  it('mutant: a ② copy is counted as a holder but not in the incarnation (its FREE would be refused for ever)', () => {
    const mutant: StepFn = (r, lid, s, e) => {
      const out = step(r, lid, s, e);
      if (e.type !== 'acquire' || (e.packet.flags & FLAG_GRANTED) === 0 || out.state.kind !== 'live' || s.kind !== 'live') return out;
      return { ...out, state: { ...out.state, agent: { ...out.state.agent, inca: s.agent.inca } } };
    };
    expect(failures(mutant)).toEqual(expect.arrayContaining(['② a GRANTED copy is counted: a holder, and one more incarnation (share-mode counting, §4.2)']));
  });

  it('mutant: a parked agent takes a request of the other mode without the decider (breaks Lemma 1)', () => {
    const mutant: StepFn = (r, lid, s, e) => step({ ...r, mutantParkedModeChange: true }, lid, s, e);
    expect(failures(mutant)).toEqual(['parking: a request of the other mode FREEs the parked agent first and asks the switch (Lemma 1)']);
  });

  it('mutant: a refused transfer puts its grantee back at the head again (a second copy would be granted twice)', () => {
    const mutant: StepFn = (r, lid, s, e) => {
      const out = step(r, lid, s, e);
      if (e.type !== 'refused' || e.packet.type !== 'grant' || out.state.kind !== 'live') return out;
      const head: Waiter = { mid: e.packet.machine, task: e.packet.task, mode: e.packet.mode };
      return { ...out, state: { ...out.state, agent: { ...out.state.agent, wqueue: [head, ...out.state.agent.wqueue] } } };
    };
    expect(failures(mutant)).toEqual(["⑧ refused: the pending agent comes back with the decider's incarnation and its grantee once at the head (wide seed 89)"]);
  });

  // The rules below replaced older ones whose production flags were retired (decision 0013); the
  // older rule, written here as a variant of step, must fail the table.
  it('mutant (old rule): a refused timeout-free restores the pending agent (both-links seeds 393, 500: two agents)', () => {
    const mutant: StepFn = (r, lid, s, e) => {
      if (e.type !== 'refused' || s.kind !== 'pending' || (e.packet.flags & FLAG_ABORT) === 0) return step(r, lid, s, e);
      const out = step(r, lid, NO_AGENT, e);
      return { ...out, state: out.state.kind === 'live' ? { ...out.state, agent: { ...out.state.agent, id: s.agent.id, wqueue: s.agent.wqueue } } : out.state };
    };
    expect(failures(mutant)).toEqual(["a refused timeout-free leaves a pending agent to its own packet's answer (both-links seeds 370, 393)"]);
  });

  it('mutant (old rule): an installed agent leaves the earlier FREE / transfer GRANT of its lock on the link (both-links seed 2, seed 52)', () => {
    const mutant: StepFn = (r, lid, s, e) => {
      const out = step(r, lid, s, e);
      return { ...out, actions: out.actions.filter((a) => a.kind !== 'void-old-handoffs') };
    };
    expect(failures(mutant)).toEqual(['⑧ install: a shared agent arrives with its queue and grants the leading readers at once']);
  });

  it('mutant (old rule): an installed agent keeps the stuck waits of its lock\'s RELEASEs (wide seeds 109, 364)', () => {
    const mutant: StepFn = (r, lid, s, e) => {
      const out = step(r, lid, s, e);
      return { ...out, actions: out.actions.filter((a) => a.kind !== 'stuck-restart') };
    };
    expect(failures(mutant)).toEqual(['⑧ install: a shared agent arrives with its queue and grants the leading readers at once']);
  });

  it('mutant (old rule): a ② copy that comes after its request\'s abort was answered becomes a holder nobody releases (swarm 113, 292; wide 49)', () => {
    const mutant: StepFn = (r, lid, s, e) => step(r, lid, s, e.type === 'acquire' ? { ...e, givenUp: false } : e);
    expect(failures(mutant)).toEqual(['② a copy whose abort was answered first is counted and released at once (pool/given-up.ts)']);
  });

  it('mutant (old rule): a GRANT taken silently stays held after its timeout-free is answered (swarm 242)', () => {
    const mutant: StepFn = (r, lid, s, e) => (e.type === 'abort-freed' ? { state: s, actions: [], outcome: 'ignored' } : step(r, lid, s, e));
    expect(failures(mutant)).toEqual(['a timeout-free answered freed releases the GRANT its task took silently meanwhile (swarm lossy seed 242)']);
  });

  it('mutant (old rule): a duplicate of a certain ② grant is always queued (swarm lossy 24, 48, 364; wide watchdog seed 53)', () => {
    const mutant: StepFn = (r, lid, s, e) => step({ ...r, mutantDupNeverGranted: true }, lid, s, e);
    expect(failures(mutant)).toEqual(['a duplicate the decider marks GRANTABLE, first sent within this lifetime, is counted as its lost ② grant (swarm lossy 24, 48)']);
  });

  it('mutant: a refusal of a resent packet keeps the anchors whatever happened since (wide seed 455: two agents)', () => {
    const mutant: StepFn = (r, lid, s, e) => step(r, lid, s, e.type === 'refused' ? { ...e, movedOn: false } : e);
    expect(failures(mutant)).toEqual(['a refusal of a resent FREE after which a lifetime may have begun here restores the agent without its anchors (wide seed 455)']);
  });

  it('mutant (old rule): a ② copy is counted wherever it lands, whatever home it names (swarm seed 236)', () => {
    const mutant: StepFn = (r, lid, s, e) => step({ ...r, mutantCountForeignCopy: true }, lid, s, e);
    expect(failures(mutant)).toEqual(['② a copy naming another home is stale here: not counted, not bounced (swarm seed 236)', '② a copy naming another home, no agent here: answered, not bounced on']);
  });

  it('mutant: a ② copy reaching an exclusive agent is counted (wide seeds 16, 24, 27: a shared holder nobody releases)', () => {
    const mutant: StepFn = (r, lid, s, e) => {
      if (e.type !== 'acquire' || s.kind !== 'live' || s.agent.mode !== 'exclusive') return step(r, lid, s, e);
      return step(r, lid, { ...s, agent: { ...s.agent, mode: 'shared' } }, e);
    };
    expect(failures(mutant)).toEqual(expect.arrayContaining(['② a copy reaching an exclusive agent is dropped as orphaned (wide seeds 16, 24, 27)']));
  });
});
