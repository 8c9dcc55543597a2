import { describe, expect, it } from 'vitest';
import type { LockPacket } from '@lockfabric/ports';
import { FLAG_GRANTED, FLAG_HAS_AGENT } from '../src/wire.js';
import { fissSim } from './support/fiss-sim.js';

const is = (type: string, flags = 0) => (p: LockPacket) => p.type === type && (p.flags & flags) === flags;

/** Settles to true once `p` resolves, so a test can ask "granted yet?" between simulation steps. */
function watch<T>(p: Promise<T>): { readonly done: boolean; readonly value: Promise<T> } {
  const state = { done: false, value: p };
  void p.then(() => (state.done = true));
  return state;
}

describe('fisslock mutants are caught', () => {
  // Fig. 10: a ② copy delayed past the agent's FREE. The incarnation check refuses that FREE.
  for (const mutant of [false, true]) {
    it(`decider ${mutant ? 'WITHOUT' : 'with'} the incarnation check: a writer is ${mutant ? 'granted while a ② reader still holds (caught)' : 'kept waiting until the ② reader releases'}`, async () => {
      const sim = fissSim({ mutantNoIncarnationCheck: mutant });
      const [a, b, c] = sim.nodes as [number, number, number];
      const ca = sim.client(a, 0);
      const gap = ca.acquire(0, 'shared');
      await sim.step();
      const ga = await gap;
      sim.fault({ direction: 'in', machine: a, match: is('acquire', FLAG_GRANTED), action: { delayNs: 60_000 } });
      const cb = sim.client(b, 1);
      const gbp = cb.acquire(0, 'shared'); // ②, its copy late
      await sim.step(20_000);
      const gb = await gbp;
      await ca.release(ga); // FREE with a stale incarnation
      await sim.step(10_000);
      const writer = watch(sim.client(c, 2).acquire(0, 'exclusive'));
      await sim.step(200_000);
      // b still holds shared here: a writer's grant now breaks reader-writer exclusion
      expect(writer.done).toBe(mutant);
      if (mutant) return;
      await cb.release(gb);
      await sim.step(1_000_000);
      expect(writer.done).toBe(true);
    });
  }

  // A transfer GRANT duplicated on the wire, the copy arriving after the lock moved on.
  for (const mutant of [false, true]) {
    it(`agent pool ${mutant ? 'WITHOUT' : 'with'} duplicate suppression: a late duplicate transfer GRANT ${mutant ? 'revives a stale agent whose FREE frees a held lock (caught)' : 'is ACKed as a duplicate and changes nothing'}`, async () => {
      const sim = fissSim({ protocolOptions: { mutantNoDuplicateSuppression: mutant } });
      const [a, b, c] = sim.nodes as [number, number, number];
      const ca = sim.client(a, 0);
      const cb = sim.client(b, 1);
      const gap = ca.acquire(0, 'exclusive');
      await sim.step();
      const ga = await gap;
      const gbp = cb.acquire(0, 'exclusive'); // ③
      await sim.step();
      sim.fault({ direction: 'in', machine: b, match: is('grant', FLAG_HAS_AGENT), action: { duplicateAfterNs: 300_000 } });
      await ca.release(ga); // ⑧ to b
      await sim.step(50_000);
      await cb.release(await gbp); // ⑦: the lock is free
      await sim.step(50_000);
      const cc = sim.client(c, 2);
      const gcp = cc.acquire(0, 'exclusive'); // ① to c
      await sim.step(50_000);
      await gcp;
      await sim.step(500_000); // the duplicate lands on b
      const other = watch(sim.client(a, 3).acquire(0, 'exclusive'));
      await sim.step(200_000);
      // c still holds exclusively: another exclusive grant is a violation
      expect(other.done).toBe(mutant);
      expect(sim.pool(b).counters.duplicates).toBe(mutant ? 0 : 1);
    });
  }
});
