import { describe, expect, it } from 'vitest';
import { RejoinPolicy } from './rejoin-policy.js';
import type { RejoinDecision, ViewEntry } from './rejoin-policy.js';

const NODE = 2;
const FIRST = 1_000n;
const NEXT = 2_000n;

type Step =
  | { readonly view: readonly [epoch: bigint, members: readonly ViewEntry[]]; readonly rejoin: boolean }
  | { readonly failure: readonly [epoch: bigint, role: string, node: number, incarnation: bigint]; readonly rejoin: boolean }
  | { readonly rejoined: bigint };

interface Scenario {
  readonly name: string;
  /** The incarnation the node learned from its own heartbeat; undefined: not yet. */
  readonly learned?: bigint;
  readonly steps: readonly Step[];
}

/** What the node under test exposes to the scenarios (the real policy, or a mutant). */
interface Policy {
  learn(incarnation: bigint): void;
  rejoined(incarnation: bigint): void;
  view(epoch: bigint, members: readonly ViewEntry[]): RejoinDecision;
  failure(epoch: bigint, role: string, node: number, incarnation: bigint): RejoinDecision;
}

const compute = (node: number, incarnation: bigint, state: ViewEntry['state']): ViewEntry => ({ role: 'compute', node, incarnation, state });
const memory: ViewEntry = { role: 'memory', node: 0, incarnation: 5n, state: 'alive' };

const SCENARIOS: readonly Scenario[] = [
  {
    name: 'own incarnation declared dead in a view → rejoin',
    learned: FIRST,
    steps: [
      { view: [1n, [memory, compute(NODE, FIRST, 'alive')]], rejoin: false },
      { view: [2n, [memory, compute(NODE, FIRST, 'dead')]], rejoin: true },
    ],
  },
  { name: 'a failure notice naming own incarnation → rejoin', learned: FIRST, steps: [{ failure: [3n, 'compute', NODE, FIRST], rejoin: true }] },
  {
    name: 'a stale view (older epoch) declaring it dead → nothing',
    learned: FIRST,
    steps: [
      { view: [5n, [compute(NODE, FIRST, 'alive')]], rejoin: false },
      { view: [4n, [compute(NODE, FIRST, 'dead')]], rejoin: false },
      { failure: [4n, 'compute', NODE, FIRST], rejoin: false },
    ],
  },
  {
    name: 'an earlier life of this node declared dead → nothing',
    learned: FIRST,
    steps: [
      { view: [1n, [compute(NODE, FIRST - 1n, 'dead'), compute(NODE, FIRST, 'alive')]], rejoin: false },
      { failure: [1n, 'compute', NODE, FIRST - 1n], rejoin: false },
    ],
  },
  {
    name: 'before it knows its incarnation, it cannot tell whose death is reported → nothing',
    steps: [
      { view: [1n, [compute(NODE, FIRST, 'dead')]], rejoin: false },
      { failure: [1n, 'compute', NODE, FIRST], rejoin: false },
    ],
  },
  {
    name: 'other nodes and other roles with the same number → nothing',
    learned: FIRST,
    steps: [
      { view: [1n, [compute(NODE, FIRST, 'alive'), compute(NODE + 1, FIRST, 'dead'), { role: 'switch', node: NODE, incarnation: FIRST, state: 'dead' }]], rejoin: false },
      { failure: [2n, 'memory', NODE, FIRST], rejoin: false },
      { failure: [2n, 'compute', NODE + 1, FIRST], rejoin: false },
    ],
  },
  {
    name: 'leaving the view after being listed alive → rejoin (memory nodes fence it)',
    learned: FIRST,
    steps: [
      { view: [1n, [compute(NODE, FIRST, 'alive')]], rejoin: false },
      { view: [2n, [memory]], rejoin: true },
    ],
  },
  {
    name: 'not yet in the view after start (the coordinator has not heard it) → nothing',
    learned: FIRST,
    steps: [
      { view: [1n, [memory]], rejoin: false },
      { view: [2n, [memory, compute(NODE, FIRST, 'suspect')]], rejoin: false },
    ],
  },
  {
    name: 'after a rejoin only the new incarnation counts',
    learned: FIRST,
    steps: [
      { view: [1n, [compute(NODE, FIRST, 'dead')]], rejoin: true },
      { rejoined: NEXT },
      // Late announcements of the old death, before the coordinator heard the new incarnation.
      { view: [1n, [compute(NODE, FIRST, 'dead')]], rejoin: false },
      { failure: [1n, 'compute', NODE, FIRST], rejoin: false },
      { view: [2n, [compute(NODE, NEXT, 'alive')]], rejoin: false },
      { view: [3n, [compute(NODE, NEXT, 'dead')]], rejoin: true },
    ],
  },
];

/** Every step whose decision differs from the scenario's expectation, described. */
function mismatches(make: (learned: bigint | undefined) => Policy): string[] {
  const out: string[] = [];
  for (const scenario of SCENARIOS) {
    const policy = make(scenario.learned);
    scenario.steps.forEach((step, i) => {
      if ('rejoined' in step) return policy.rejoined(step.rejoined);
      const decision = 'view' in step ? policy.view(...step.view) : policy.failure(...step.failure);
      if (decision.rejoin !== step.rejoin) out.push(`${scenario.name}, step ${i}: expected rejoin=${step.rejoin}`);
    });
  }
  return out;
}

const real = (learned: bigint | undefined): Policy => {
  const policy = new RejoinPolicy(NODE);
  if (learned !== undefined) policy.learn(learned);
  return policy;
};

/** A mutant that rejoins on any death of its node number, whatever the incarnation, role or epoch. */
const careless = (): Policy => ({
  learn: () => undefined,
  rejoined: () => undefined,
  view: (_epoch, members) => (members.some((m) => m.node === NODE && m.state === 'dead') ? { rejoin: true, reason: 'dead' } : { rejoin: false }),
  failure: (_epoch, _role, node) => (node === NODE ? { rejoin: true, reason: 'dead' } : { rejoin: false }),
});

/** A mutant that checks everything but the epoch: stale views make it rejoin. */
const epochBlind = (learned: bigint | undefined): Policy => {
  const inner = real(learned);
  let epoch = 1_000n;
  return {
    learn: (i) => inner.learn(i),
    rejoined: (i) => inner.rejoined(i),
    view: (_e, members) => inner.view(epoch++, members),
    failure: (_e, role, node, incarnation) => inner.failure(epoch++, role, node, incarnation),
  };
};

describe('RejoinPolicy', () => {
  it('decides every scenario as expected', () => {
    expect(mismatches(real)).toStrictEqual([]);
  });

  it('the scenarios catch a careless policy and an epoch-blind one', () => {
    const careless_ = mismatches(careless);
    expect(careless_.length).toBeGreaterThan(3);
    expect(careless_.join('\n')).toContain('earlier life');
    expect(mismatches(epochBlind).join('\n')).toContain('stale view');
  });

  it('learns its first incarnation once, and rejoins only upwards', () => {
    const policy = new RejoinPolicy(NODE);
    expect(policy.current).toBeUndefined();
    policy.learn(FIRST);
    policy.learn(FIRST + 5n);
    expect(policy.current).toBe(FIRST);
    expect(() => policy.rejoined(FIRST)).toThrow(RangeError);
    policy.rejoined(NEXT);
    expect(policy.current).toBe(NEXT);
  });

  it('says why it rejoins', () => {
    const policy = new RejoinPolicy(NODE, FIRST);
    expect(policy.view(7n, [compute(NODE, FIRST, 'dead')])).toStrictEqual({ rejoin: true, reason: `the view of epoch 7 lists compute node ${NODE} incarnation ${FIRST} dead` });
  });
});
