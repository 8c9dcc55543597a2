import { describe, expect, it } from 'vitest';
import { RecoveryBook } from './recovery-book.js';
import { failureNoticeToWire } from './recovery-wire.js';

const MS = 1_000_000;
const compute = { role: 'compute', id: '3', node: 3, incarnation: 42n };
const memory = { role: 'memory', id: '0', node: 0, incarnation: 7n };

describe('RecoveryBook (injected time)', () => {
  it('a memory failure waits for the member to come back', () => {
    const book = new RecoveryBook();
    book.begin(memory, 2n, 5 * MS);
    expect(book.tick(10_000 * MS)).toStrictEqual([]);
    expect(book.rejoined('compute', '0', 20 * MS)).toBeUndefined();
    const back = book.rejoined('memory', '0', 12_000 * MS);
    expect(back).toMatchObject({ doneAtNs: 12_000 * MS, actions: [{ protocol: '*', mechanism: 'await-restart', doneAtNs: 12_000 * MS }] });
    expect(book.activeCount).toBe(0);
  });

  it('books the rules of the protocols it was given, by role; none of a protocol it was not given', () => {
    const protocols = new Map([
      ['a', { compute: { mechanism: 'lease' as const, boundMs: 5, action: 'a waits' } }],
      ['b', { compute: { mechanism: 'none' as const, action: 'b keeps it' }, switch: { mechanism: 'await-restart' as const, action: 'b rebuilds' } }],
    ]);
    const book = new RecoveryBook({ protocols });
    expect(book.begin(compute, 1n, 0).actions.map((a) => [a.protocol, a.mechanism])).toStrictEqual([
      ['a', 'lease'],
      ['b', 'none'],
    ]);
    expect(book.begin({ role: 'switch', id: 's', node: 9, incarnation: 1n }, 1n, 0).actions.map((a) => a.protocol)).toStrictEqual(['b']);
    expect(new RecoveryBook().begin(compute, 1n, 0).actions).toStrictEqual([]);
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

});
