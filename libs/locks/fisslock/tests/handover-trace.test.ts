import { describe, expect, it } from 'vitest';
import { fissSim } from './support/fiss-sim.js';
import { RecordingTrace } from './support/recording-trace.js';

const ROLE = { 'lockfabric.link.role': 'previous-holder' };

describe('fisslock lock.handover spans (agent transfer ⑧)', () => {
  it('the releasing machine records the handover, its context rides in the transfer GRANT, the next holder links to it', async () => {
    const trace = new RecordingTrace();
    const sim = fissSim({ trace });
    const [a, b] = sim.nodes as [number, number];
    const ca = sim.client(a, 0);
    const gap = ca.acquire(0, 'exclusive');
    await sim.step();
    const ga = await gap;
    const gbp = sim.client(b, 1).acquire(0, 'exclusive'); // ③
    await sim.step();
    await ca.release(ga); // ⑧
    await sim.step();
    const gb = await gbp;

    const [acquireA, acquireB] = trace.named('lock.acquire');
    const handovers = trace.named('lock.handover');
    expect(handovers).toHaveLength(1);
    const handover = handovers[0]!;
    expect(handover.ended).toBe(true);
    expect(handover.attributes).toMatchObject({
      'lockfabric.protocol': 'fisslock',
      'lockfabric.lock.id': 0,
      'lockfabric.handover.from': `${a}/0`,
      'lockfabric.handover.to': `${b}/1`,
      'lockfabric.fisslock.agent_from': a,
      'lockfabric.fisslock.agent_to': b,
    });
    expect(handover.links).toEqual([{ context: acquireA!.context, attributes: ROLE }]);
    expect(acquireB!.links).toEqual([{ context: handover.context, attributes: ROLE }]);
    // the grant span on the next holder is a child of the handover: one trace across both machines
    const grants = trace.named('lock.grant');
    expect(grants).toHaveLength(1);
    expect(grants[0]!.parent).toEqual(handover.context);
    expect(grants[0]!.attributes).toMatchObject({ 'lockfabric.protocol': 'fisslock', 'lockfabric.lock.id': 0, 'lockfabric.client': `${b}/1` });
    expect(gb.acquireSpan).toEqual(acquireB!.context);
  });

  it('⑨ remote release: the RELEASE carries the releasing holder’s acquire span, so the handover on the agent machine links to it', async () => {
    const trace = new RecordingTrace();
    const sim = fissSim({ trace });
    const [a, b, c] = sim.nodes as [number, number, number];
    const gap = sim.client(a, 0).acquire(0, 'shared');
    await sim.step();
    const ga = await gap;
    const cb = sim.client(b, 1);
    const gbp = cb.acquire(0, 'shared'); // ② on a's agent
    await sim.step();
    const gb = await gbp;
    const gcp = sim.client(c, 2).acquire(0, 'exclusive'); // ③ at a
    await sim.step();
    await sim.client(a, 0).release(ga); // ⑥
    await cb.release(gb); // ⑨ → a's agent hands over to c
    await sim.step();
    await gcp;
    const acquireB = trace.named('lock.acquire').find((s) => s.attributes['lockfabric.client'] === `${b}/1`)!;
    const [handover] = trace.named('lock.handover');
    expect(handover?.attributes).toMatchObject({ 'lockfabric.handover.from': `${b}/1`, 'lockfabric.handover.to': `${c}/2`, 'lockfabric.fisslock.agent_from': a });
    expect(handover?.links).toEqual([{ context: acquireB.context, attributes: ROLE }]);
  });

  it('no handover without a waiter: ① grant and ⑦ free record none', async () => {
    const trace = new RecordingTrace();
    const sim = fissSim({ trace });
    const [a] = sim.nodes as [number];
    const c = sim.client(a, 0);
    const gp = c.acquire(0, 'exclusive');
    await sim.step();
    await c.release(await gp);
    await sim.step();
    expect(trace.named('lock.handover')).toEqual([]);
    expect(trace.named('lock.grant')).toEqual([]);
  });
});
