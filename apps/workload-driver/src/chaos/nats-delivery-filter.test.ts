import { describe, expect, it } from 'vitest';
import { MAX_LINE_BYTES, NatsDeliveryFilter, isSubjectPattern, subjectMatches } from './nats-delivery-filter.js';

const msg = (subject: string, payload: string, reply?: string) => `MSG ${subject} 7 ${reply ? `${reply} ` : ''}${Buffer.byteLength(payload)}\r\n${payload}\r\n`;
const hmsg = (subject: string, headers: string, payload: string) =>
  `HMSG ${subject} 3 ${Buffer.byteLength(headers)} ${Buffer.byteLength(headers) + Buffer.byteLength(payload)}\r\n${headers}${payload}\r\n`;

/** Feeds `stream` in pieces of `size` bytes and returns what came out. */
function run(filter: NatsDeliveryFilter, stream: string, size: number): string {
  const bytes = Buffer.from(stream, 'latin1');
  let out = '';
  for (let at = 0; at < bytes.length; at += size) out += filter.feed(bytes.subarray(at, at + size)).toString('latin1');
  return out;
}

describe('subject patterns', () => {
  it('match NATS wildcards: * one token, a final > one or more', () => {
    expect(subjectMatches('lf.c.ctl.fiss.2.>', 'lf.c.ctl.fiss.2.pause')).toBe(true);
    expect(subjectMatches('lf.c.ctl.fiss.*.pause', 'lf.c.ctl.fiss.2.pause')).toBe(true);
    expect(subjectMatches('lf.c.ctl.fiss.2.>', 'lf.c.ctl.fiss.2')).toBe(false);
    expect(subjectMatches('lf.c.ctl.fiss.2.>', 'lf.c.ctl.fiss.3.pause')).toBe(false);
    expect(subjectMatches('lf.c.ctl', 'lf.c.ctl.fiss')).toBe(false);
    expect(subjectMatches('lf.c.ctl.*', 'lf.c.ctl')).toBe(false);
  });
  it('validates patterns', () => {
    expect(isSubjectPattern('ctl.fiss.*.>')).toBe(true);
    expect(isSubjectPattern('ctl.>.fiss')).toBe(false);
    expect(isSubjectPattern('ctl..fiss')).toBe(false);
    expect(isSubjectPattern('ctl fiss')).toBe(false);
  });
});

describe('NatsDeliveryFilter', () => {
  const stream =
    'INFO {"server_id":"x"}\r\n' +
    msg('lf.c.hb', 'beat-1') +
    msg('lf.c.ctl.fiss.2.pause', 'pause\r\nwith CRLF inside', '_INBOX.abc') +
    'PING\r\n' +
    hmsg('lf.c.ctl.fiss.2.report', 'NATS/1.0\r\n\r\n', 'report') +
    msg('lf.c.hb', '') +
    hmsg('lf.c.node.2.pkt', 'NATS/1.0\r\nk: v\r\n\r\n', 'pkt');
  const kept =
    'INFO {"server_id":"x"}\r\n' + msg('lf.c.hb', 'beat-1') + 'PING\r\n' + msg('lf.c.hb', '') + hmsg('lf.c.node.2.pkt', 'NATS/1.0\r\nk: v\r\n\r\n', 'pkt');

  it('drops exactly the matching MSG and HMSG frames, whatever the chunking', () => {
    for (const size of [1, 2, 3, 7, 16, 1_000]) {
      const filter = new NatsDeliveryFilter((s) => subjectMatches('lf.c.ctl.fiss.2.>', s));
      expect(run(filter, stream, size), `chunks of ${size}`).toBe(kept);
      expect(filter.dropped).toBe(2);
      expect(filter.following).toBe(true);
    }
  });

  it('passes everything when nothing matches', () => {
    const filter = new NatsDeliveryFilter(() => false);
    expect(run(filter, stream, 5)).toBe(stream);
    expect(filter.dropped).toBe(0);
  });

  it('a line it cannot follow ends filtering, and nothing after it is lost', () => {
    const filter = new NatsDeliveryFilter(() => true);
    const broken = 'MSG only-two\r\n' + msg('lf.c.x', 'after');
    expect(run(filter, broken, 4)).toBe(broken);
    expect(filter.following).toBe(false);
    const long = new NatsDeliveryFilter(() => true);
    const huge = 'X'.repeat(MAX_LINE_BYTES + 10);
    expect(run(long, huge, 4_096)).toBe(huge);
    expect(long.following).toBe(false);
  });
});
