/**
 * Drops chosen messages from the server-to-client half of a NATS connection, for a partial
 * partition (`lockfabric chaos partition TARGET --subjects …`): the process stays connected and
 * keeps publishing (its heartbeats go out), but the server's deliveries on the chosen subjects never
 * reach it — a gray failure, like a stuck subscription or a broken handler.
 *
 * It follows the protocol's framing on every chunk, dropping or not, so a drop that starts mid-stream
 * knows where each message begins: `MSG <subject> <sid> [reply] <bytes>` and
 * `HMSG <subject> <sid> [reply] <header bytes> <total bytes>` are followed by that many payload bytes
 * and CRLF; every other operation (INFO, PING, PONG, +OK, -ERR) is one line. Output order is input
 * order. A line that outgrows MAX_LINE_BYTES or does not parse ends filtering for the connection
 * (everything after it passes): a relay must not break a protocol it cannot follow.
 */
import { subjectMatches } from '@lockfabric/control';

export const MAX_LINE_BYTES = 64 * 1024;

/** Matches a NATS subject against a pattern (`*` one token, a final `>` one or more): the control bus's matcher. */
export { subjectMatches };

/** A valid pattern: dot-separated tokens of letters, digits, `_` or `-`, `*`, or a final `>`. */
export function isSubjectPattern(pattern: string): boolean {
  const tokens = pattern.split('.');
  return tokens.every((t, i) => /^[A-Za-z0-9_-]+$/.test(t) || t === '*' || (t === '>' && i === tokens.length - 1));
}

const CRLF = Buffer.from('\r\n');

export class NatsDeliveryFilter {
  private pending: Buffer = Buffer.alloc(0);
  /** Payload bytes (with their CRLF) of the message being passed or dropped. */
  private payloadLeft = 0;
  private droppingPayload = false;
  private lost = false;
  dropped = 0;

  /** `drops(subject)` decides per delivered message; it is asked only while the filter follows the stream. */
  constructor(private readonly drops: (subject: string) => boolean) {}

  /** Whether the filter lost the framing (then it passes everything). */
  get following(): boolean {
    return !this.lost;
  }

  /** The bytes of `chunk` to forward, in order (possibly empty). */
  feed(chunk: Buffer): Buffer {
    if (this.lost) return chunk;
    const input = this.pending.length > 0 ? Buffer.concat([this.pending, chunk]) : chunk;
    this.pending = Buffer.alloc(0);
    const out: Buffer[] = [];
    let at = 0;
    while (at < input.length) {
      if (this.payloadLeft > 0) {
        const n = Math.min(this.payloadLeft, input.length - at);
        if (!this.droppingPayload) out.push(input.subarray(at, at + n));
        this.payloadLeft -= n;
        at += n;
        continue;
      }
      const end = input.indexOf(CRLF, at);
      if (end < 0) {
        if (input.length - at > MAX_LINE_BYTES) return this.loseFraming(out, input.subarray(at));
        this.pending = Buffer.from(input.subarray(at));
        break;
      }
      const line = input.subarray(at, end + 2);
      const payload = payloadBytes(input.toString('latin1', at, end));
      if (payload === 'bad') return this.loseFraming(out, input.subarray(at));
      at = end + 2;
      if (payload === undefined) {
        out.push(line);
        continue;
      }
      const drop = this.drops(payload.subject);
      if (drop) this.dropped++;
      else out.push(line);
      this.payloadLeft = payload.bytes + 2;
      this.droppingPayload = drop;
    }
    return out.length === 1 ? (out[0] as Buffer) : Buffer.concat(out);
  }

  private loseFraming(out: Buffer[], rest: Buffer): Buffer {
    this.lost = true;
    out.push(rest);
    return Buffer.concat(out);
  }
}

/** The subject and payload size of a MSG/HMSG line; undefined for other operations; 'bad' when it does not parse. */
function payloadBytes(line: string): { subject: string; bytes: number } | undefined | 'bad' {
  const parts = line.split(' ').filter((p) => p !== '');
  const op = parts[0]?.toUpperCase();
  if (op !== 'MSG' && op !== 'HMSG') return undefined;
  // MSG subject sid [reply] size | HMSG subject sid [reply] hdr total
  const arity = op === 'MSG' ? [4, 5] : [5, 6];
  if (!arity.includes(parts.length)) return 'bad';
  const bytes = Number(parts[parts.length - 1]);
  if (!Number.isInteger(bytes) || bytes < 0) return 'bad';
  return { subject: parts[1] as string, bytes };
}
