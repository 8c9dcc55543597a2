import type { ProtocolOptions } from '@lockfabric/locks-common';
import type { Random } from '@lockfabric/ports';

/**
 * ALock's options drawn per swarm seed: small budgets so both cohorts re-arbitrate often, poll
 * periods that move when hand-offs are noticed, both Peterson read shapes (spec A9) and
 * same-node CPU stores (spec A11). Protocol options are drawn last, so the fault draws stay put.
 * The successor-link timeout stays under the 50 ms heal budget: at the 50 ms default, a release
 * waiting on a killed successor's link outlasted it (swarm seed 938 with budgets 2/1).
 */
export function alockSwarmOptions(random: Random): ProtocolOptions {
  const pick = <T>(items: readonly T[]): T => items[random.int(items.length)]!;
  return {
    localBudget: 1 + random.int(5),
    remoteBudget: 1 + random.int(5),
    spinNs: pick([100, 300, 1_000]),
    remoteSpinNs: pick([500, 1_000, 3_000]),
    petersonRead: pick(['separate', 'combined'] as const),
    sameNodeStores: random.next() < 0.3,
    releaseLinkTimeoutNs: pick([2_000_000, 20_000_000]),
  };
}
