import { RecoveryBook, parseRecoveryDetail, recoveryToWire, rulesFor } from '@lockfabric/control';
import { protocolRecoveries } from '@lockfabric/lock-catalog';
import { PROTOCOL_IDS } from '@lockfabric/ports';
import { describe, expect, it } from 'vitest';
import { coordinatorControlPlane } from './plugins.js';

// The catalog's protocols' recovery rules (each declared by its definition) in the coordinator's book.
const MS = 1_000_000;
const compute = { role: 'compute', id: '3', node: 3, incarnation: 42n };

describe('protocol recovery rules in the recovery book', () => {
  it('has a compute rule for every protocol id, in PROTOCOL_IDS order, and switch rules for the protocols that keep state in the switch', () => {
    expect([...protocolRecoveries().keys()]).toStrictEqual([...PROTOCOL_IDS]);
    expect([...rulesFor('switch', protocolRecoveries()).keys()]).toStrictEqual(['fisslock', 'netlock']);
  });

  it('a compute failure: lease actions finish at detection + bound, driven ones when their steps are recorded', () => {
    const book = new RecoveryBook({ protocols: protocolRecoveries(), leaseBoundsMs: { dslr: 400, 'dslr-backoff': 400, drtm: 60, redlock: 1 } });
    const r = book.begin(compute, 9n, 1_000 * MS);
    expect(r).toMatchObject({ seq: 1, role: 'compute', id: '3', node: 3, incarnation: 42n, epoch: 9n, detectedAtNs: 1_000 * MS });
    expect(r.doneAtNs).toBeUndefined();
    const dslr = r.actions.find((a) => a.protocol === 'dslr');
    expect(dslr).toMatchObject({ mechanism: 'lease', dueAtNs: 1_400 * MS });
    expect(dslr?.doneAtNs).toBeUndefined();
    // Every protocol recovers a dead compute node somehow, except the one-sided baselines without
    // leases or repair (rma-rw, ncosed, sherman: their papers have none).
    expect(r.actions.filter((a) => a.mechanism === 'none').map((a) => a.protocol)).toStrictEqual(['rma-rw', 'ncosed', 'sherman']);
    // The memory-node CPU managers are done when the memory node reports the fence (after the drop).
    expect(r.actions.filter((a) => a.protocol === 'rpc' || a.protocol.startsWith('traditional')).map((a) => a.mechanism)).toStrictEqual(['fence', 'fence', 'fence']);
    expect(r.actions.find((a) => a.protocol === 'netlock')).toMatchObject({ mechanism: 'driven' });
    expect(r.actions.find((a) => a.protocol === 'netlock')?.doneAtNs).toBeUndefined();

    // Defaults apply where no override is given: shiftlock 30 ms.
    expect(book.tick(1_030 * MS - 1)).toStrictEqual([]);
    expect(book.all()[0]?.actions.find((a) => a.protocol === 'shiftlock')?.doneAtNs).toBeUndefined();
    expect(book.tick(1_100 * MS)).toStrictEqual([]);
    expect(book.all()[0]?.actions.find((a) => a.protocol === 'shiftlock')?.doneAtNs).toBe(1_030 * MS);
    expect(book.activeCount).toBe(1);

    // Fenced protocols finish when a memory node reports it fenced the node and cleared its words;
    // a report about an earlier epoch (an earlier failure) does not count.
    expect(book.reported(3, 'caslock', 8n, 1_200 * MS)?.actions.find((a) => a.protocol === 'caslock')?.doneAtNs).toBeUndefined();
    book.reported(3, 'caslock', 9n, 1_200 * MS);
    book.reported(3, 'drtm', 9n, 1_210 * MS);
    for (const protocol of ['rpc', 'traditional', 'traditional-ro']) book.reported(3, protocol, 9n, 1_220 * MS);
    expect(book.all()[0]?.actions.filter((a) => a.mechanism === 'fence').map((a) => [a.protocol, a.doneAtNs])).toStrictEqual([
      ['caslock', 1_200 * MS],
      ['drtm', 1_210 * MS],
      ['rpc', 1_220 * MS],
      ['traditional', 1_220 * MS],
      ['traditional-ro', 1_220 * MS],
    ]);
    // FissLock's coordinator-driven steps (fisslock-recovery) and NetLock's purge are over early too.
    book.recordSteps('compute', '3', 'fisslock', [], 1_300 * MS);
    book.recordSteps('compute', '3', 'netlock', [], 1_300 * MS);
    // So are the queue locks' (queue-lock-recovery: gate, drain, abort, reset).
    for (const protocol of ['mcs', 'alock']) book.recordSteps('compute', '3', protocol, [], 1_300 * MS);
    // The last lease (dslr, 400 ms) ends the recovery; done is the due time, not the tick's time.
    const [done] = book.tick(1_500 * MS);
    expect(done?.doneAtNs).toBe(1_400 * MS);
    expect(book.activeCount).toBe(0);
    expect(book.all()).toHaveLength(1);
  });


  it('Status lists one phase per protocol action with its timings in the detail', () => {
    const book = new RecoveryBook({ protocols: protocolRecoveries(), leaseBoundsMs: { dslr: 400, redlock: 100 } });
    book.begin(compute, 11n, 1_000 * MS);
    const phases = recoveryToWire(book.all()[0]!);
    expect(phases).toHaveLength(PROTOCOL_IDS.length);
    const dslr = phases.find((p) => p.protocol === 'dslr');
    expect(dslr).toMatchObject({ epoch: 11n, node: 3, done: false, timeNs: 1_000n * 1_000_000n });
    expect(parseRecoveryDetail(dslr?.detail ?? '')).toStrictEqual({
      member: 'compute/3',
      incarnation: '42',
      mechanism: 'lease',
      detected_ns: BigInt(1_000 * MS).toString(),
      due_ns: BigInt(1_400 * MS).toString(),
      action: 'waiters skip stalled tickets after 2λ; late release fenced by LeaseExpiredError',
    });
    book.reported(3, '', 11n, 1_100 * MS);
    book.recordSteps('compute', '3', 'fisslock', [], 1_100 * MS);
    book.recordSteps('compute', '3', 'netlock', [], 1_100 * MS);
    for (const protocol of ['mcs', 'alock']) book.recordSteps('compute', '3', protocol, [], 1_100 * MS);
    book.tick(2_000 * MS);
    const after = parseRecoveryDetail(recoveryToWire(book.all()[0]!).find((p) => p.protocol === 'dslr')?.detail ?? '');
    expect(after['done_ns']).toBe(BigInt(1_400 * MS).toString());
    expect(after['recovery_done_ns']).toBe(BigInt(1_400 * MS).toString());
  });

  it('reach the control plane through the plug-ins\' merged deps', () => {
    expect(coordinatorControlPlane([]).protocolRecoveries).toStrictEqual(protocolRecoveries());
  });
});
