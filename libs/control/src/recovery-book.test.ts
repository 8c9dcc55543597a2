import { describe, expect, it } from 'vitest';
import { PROTOCOL_IDS } from '@lockfabric/ports';
import { RecoveryBook } from './recovery-book.js';
import { COMPUTE_FAILURE_RULES } from './recovery-rules.js';
import { failureNoticeToWire, parseRecoveryDetail, recoveryToWire } from './recovery-wire.js';

const MS = 1_000_000;
const compute = { role: 'compute', id: '3', node: 3, incarnation: 42n };
const memory = { role: 'memory', id: '0', node: 0, incarnation: 7n };

describe('RecoveryBook (injected time)', () => {
  it('has a rule for every protocol id', () => {
    expect(Object.keys(COMPUTE_FAILURE_RULES).sort()).toStrictEqual([...PROTOCOL_IDS].sort());
  });

  it('a compute failure: lease actions finish at detection + bound, driven ones when their steps are recorded', () => {
    const book = new RecoveryBook({ leaseBoundsMs: { dslr: 400, 'dslr-backoff': 400, drtm: 60, redlock: 1 } });
    const r = book.begin(compute, 9n, 1_000 * MS);
    expect(r).toMatchObject({ seq: 1, role: 'compute', id: '3', node: 3, incarnation: 42n, epoch: 9n, detectedAtNs: 1_000 * MS });
    expect(r.doneAtNs).toBeUndefined();
    const dslr = r.actions.find((a) => a.protocol === 'dslr');
    expect(dslr).toMatchObject({ mechanism: 'lease', dueAtNs: 1_400 * MS });
    expect(dslr?.doneAtNs).toBeUndefined();
    // Every protocol recovers a dead compute node somehow, except the one-sided baselines without
    // leases or repair (rma-rw, ncosed, sherman: their papers have none) and the memory-node CPU
    // managers on live (the memory node does not pass FailureNotices to protocol services yet).
    expect(r.actions.filter((a) => a.mechanism === 'none').map((a) => a.protocol)).toStrictEqual(['rma-rw', 'ncosed', 'sherman', 'rpc', 'traditional', 'traditional-ro']);
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
    expect(book.all()[0]?.actions.filter((a) => a.mechanism === 'fence').map((a) => [a.protocol, a.doneAtNs])).toStrictEqual([
      ['caslock', 1_200 * MS],
      ['drtm', 1_210 * MS],
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

  it('a memory failure waits for the member to come back', () => {
    const book = new RecoveryBook();
    book.begin(memory, 2n, 5 * MS);
    expect(book.tick(10_000 * MS)).toStrictEqual([]);
    expect(book.rejoined('compute', '0', 20 * MS)).toBeUndefined();
    const back = book.rejoined('memory', '0', 12_000 * MS);
    expect(back).toMatchObject({ doneAtNs: 12_000 * MS, actions: [{ protocol: '*', mechanism: 'await-restart', doneAtNs: 12_000 * MS }] });
    expect(book.activeCount).toBe(0);
  });

  it('a member without protocol state (a driver) is recovered the moment it is declared dead', () => {
    const book = new RecoveryBook();
    expect(book.begin({ role: 'driver', id: 'x', node: 9, incarnation: 1n }, 3n, 77).doneAtNs).toBe(77);
  });

  it('a second failure of the same member supersedes the first; finished recoveries are bounded', () => {
    const book = new RecoveryBook({ keepDone: 2 });
    book.begin(memory, 1n, 0);
    book.begin({ ...memory, incarnation: 8n }, 2n, 10);
    expect(book.activeCount).toBe(1);
    expect(book.all().map((r) => [r.seq, r.doneAtNs])).toStrictEqual([
      [2, undefined],
      [1, 10],
    ]);
    for (let i = 0; i < 5; i++) book.begin({ role: 'driver', id: String(i), node: i, incarnation: 1n }, 3n, 100 + i);
    expect(book.all().map((r) => r.seq)).toStrictEqual([2, 6, 7]);
  });
});

describe('recovery on the wire', () => {
  it('a FailureNotice carries the epoch, the member and the detection time', () => {
    const r = new RecoveryBook().begin(compute, 11n, 123 * MS);
    expect(failureNoticeToWire(r, 'silent')).toMatchObject({ epoch: 11n, role: 'compute', id: '3', node: 3, incarnation: 42n, reason: 'silent', timeNs: 123n * 1_000_000n });
  });

  it('Status lists one phase per protocol action with its timings in the detail', () => {
    const book = new RecoveryBook({ leaseBoundsMs: { dslr: 400, redlock: 100 } });
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
});
