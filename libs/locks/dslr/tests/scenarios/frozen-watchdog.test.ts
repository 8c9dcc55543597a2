/** The bouncers' frozen-word watchdog (spec §7.5) must not act on a watch left from an earlier generation. */
import { describe, expect, it } from 'vitest';
import { Scenario } from '../support/scenario.js';

const US = 1_000;
const LAMBDA = 100 * US;

describe('dslr: frozen-word watchdog across generations', () => {
  it('a client that bounced once, gave up, and bounces again much later on regrown counters does not zero a live holder', async () => {
    const s = new Scenario({ leaseNs: LAMBDA, counterLimit: 4, backoffCapNs: 20 * US });
    s.setCounters({ nX: 3, nS: 0, maxX: 3, maxS: 0 });
    const bouncer = s.client();
    // H1 draws ticket 3, crosses the limit (designated resetter), holds inside its lease, zeroes.
    const h1 = s.hold(s.client(), { atNs: 0, mode: 'exclusive', holdNs: 60 * US });
    // The bouncer sees the frozen word with now-counters (3, 0) once, then its deadline passes.
    const first = s.hold(bouncer, { atNs: 1 * US, mode: 'exclusive', holdNs: 1 * US, acquire: { timeoutMs: 0.005 } });
    // Three quick holders regrow the next generation to nX = 3; H2 then freezes it the same way.
    const regrow = [100, 110, 120].map((atUs) => s.hold(s.client(), { atNs: atUs * US, mode: 'exclusive', holdNs: 2 * US }));
    const h2 = s.hold(s.client(), { atNs: 300 * US, mode: 'exclusive', holdNs: 60 * US });
    // More than 2λ after its first bounce the same client bounces on (3, 0) again, while H2 holds.
    const second = s.hold(bouncer, { atNs: 310 * US, mode: 'exclusive', holdNs: 1 * US });
    await s.run();
    expect((await first).error).toBe('LockTimeoutError');
    expect((await h1).releaseError).toBeUndefined();
    for (const r of await Promise.all(regrow)) expect(r.releaseError).toBeUndefined();
    const held = await h2;
    expect(held.grant?.resetFrom).toBeDefined();
    expect(held.releaseError).toBeUndefined();
    const again = await second;
    expect(again.granted).toBe(true);
    expect(again.grantNs!).toBeGreaterThanOrEqual(held.releasedNs!);
    expect(s.verdict().ok).toBe(true);
  });
});
