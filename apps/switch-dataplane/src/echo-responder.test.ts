import { MalformedInputCounter } from '@lockfabric/live';
import { describe, expect, it } from 'vitest';
import { EchoResponder, MAX_ECHO_BYTES, type EchoRequest } from './echo-responder.js';

const SUBJECT = 'lf.t.sw.0.echo';
const quiet = { info: () => {}, warn: () => {}, error: () => {}, debug: () => {} };

function request(data: unknown, reply: string | undefined, sent: Uint8Array[], respondOk = true): EchoRequest {
  return { data, reply, respond: (d?: Uint8Array) => (d && sent.push(d), respondOk) } as unknown as EchoRequest;
}

/** A broken responder the tests must catch: it answers anything, with no checks and no count of refusals. */
class UncheckedEchoResponder extends EchoResponder {
  override handle(r: EchoRequest): void {
    r.respond(r.data);
  }
}

function run(responder: EchoResponder, malformed: MalformedInputCounter): { sent: Uint8Array[]; echoes: number; refused: number } {
  const sent: Uint8Array[] = [];
  responder.handle(request(new Uint8Array([1, 2, 3]), '_INBOX.a', sent));
  responder.handle(request(new Uint8Array(0), '_INBOX.b', sent));
  // garbage: no reply subject, oversized, not bytes, not a message, an answer that cannot go
  responder.handle(request(new Uint8Array([9]), undefined, sent));
  responder.handle(request(new Uint8Array(MAX_ECHO_BYTES + 1), '_INBOX.c', sent));
  responder.handle(request('text', '_INBOX.d', sent));
  responder.handle(null as unknown as EchoRequest);
  responder.handle(request(new Uint8Array([7]), '_INBOX.e', sent, false));
  return { sent, echoes: responder.echoes, refused: malformed.count(SUBJECT) };
}

describe('EchoResponder', () => {
  it('answers well-formed requests with their payload and counts every other input as malformed, never throwing', () => {
    const malformed = new MalformedInputCounter({ logger: quiet });
    const { sent, echoes, refused } = run(new EchoResponder(SUBJECT, malformed), malformed);
    // the unanswerable one was attempted (respond returned false) but is not an echo
    expect(sent.map((d) => [...d])).toEqual([[1, 2, 3], [], [7]]);
    expect(echoes).toBe(2);
    expect(refused).toBe(5);
  });

  it('the checks are what the test sees: a responder without them answers garbage or throws', () => {
    const malformed = new MalformedInputCounter({ logger: quiet });
    expect(() => run(new UncheckedEchoResponder(SUBJECT, malformed), malformed)).toThrow();
    const partial = new UncheckedEchoResponder(SUBJECT, malformed);
    const sent: Uint8Array[] = [];
    partial.handle(request(new Uint8Array(MAX_ECHO_BYTES + 1), '_INBOX.c', sent));
    expect(sent).toHaveLength(1); // the oversized payload went back: what the real one refuses
    expect(malformed.count(SUBJECT)).toBe(0);
  });
});
