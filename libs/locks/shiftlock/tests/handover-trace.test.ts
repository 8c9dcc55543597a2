import { describe, expect, it } from 'vitest';
import { RecordingTrace } from './support/recording-trace.js';
import { scripted } from './support/scripted.js';

describe('lock.handover spans: the releaser starts one and sends its context; the next holder links to it', () => {
  for (const [name, options, message] of [
    ['writer-to-writer Handover', {}, 'handover'],
    ['transfer to readers, ModeChanged', { consecutiveWriters: 1 }, 'mode-change'],
  ] as const) {
    it(name, async () => {
      const trace = new RecordingTrace();
      const s = scripted(options, { trace });
      const [w1, w2] = [s.client(0), s.client(1)];
      const first = s.acquire(w1, 0, 'exclusive');
      await s.until(first.settled);
      const second = s.acquire(w2, 0, 'exclusive');
      await s.advance(20_000);
      await s.run(w1.release(first.grant!));
      await s.until(second.settled);

      const [acquire1, acquire2] = trace.named('lock.acquire');
      const handovers = trace.named('lock.handover');
      expect(handovers).toHaveLength(1);
      const handover = handovers[0]!;
      expect(handover.ended).toBe(true);
      expect(handover.attributes).toMatchObject({
        'lockfabric.protocol': 'shiftlock',
        'lockfabric.lock.id': 0,
        'lockfabric.handover.from': '1/0',
        'lockfabric.handover.to': '2/1',
        'lockfabric.shiftlock.message': message,
      });
      // The handover span links back to the releasing holder's acquire ...
      expect(handover.links).toEqual([{ context: acquire1!.context, attributes: { 'lockfabric.link.role': 'previous-holder' } }]);
      // ... and the next holder's acquire span links to the handover span, whose context came in the Message.
      expect(acquire2!.links).toEqual([{ context: handover.context, attributes: { 'lockfabric.link.role': 'previous-holder' } }]);
      expect(acquire2!.attributes).toMatchObject({ 'lockfabric.outcome': 'granted', 'lockfabric.messages': 1 });
      expect(second.grant?.acquireSpan).toEqual(acquire2!.context);
    });
  }

  it('an uncontended release starts no handover span', async () => {
    const trace = new RecordingTrace();
    const s = scripted({}, { trace });
    const w = s.client(0);
    const pending = s.acquire(w, 0, 'exclusive');
    await s.until(pending.settled);
    await s.run(w.release(pending.grant!));
    expect(trace.named('lock.handover')).toEqual([]);
  });
});
