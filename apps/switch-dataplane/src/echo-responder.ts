import type { MalformedInputCounter } from '@lockfabric/live';
import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node';

/**
 * The switch's echo subject (`subjects.switchEcho(rack)`): each request is answered at once with
 * its own payload, so `lockfabric bench` measures the NATS floor of a switch lock on the path its
 * packets take (client process → nats-server → switch → nats-server → client) rather than inside
 * one process. The answer is synchronous: nothing is queued, and the cost per request does not
 * depend on the request rate. Anything else — no reply subject, an oversized payload — is counted
 * as malformed and dropped.
 */
export const MAX_ECHO_BYTES = 1_024;

/** The part of a NATS message the responder reads (a real `Msg`, or a test's stand-in). */
export type EchoRequest = Pick<Msg, 'data' | 'reply' | 'respond'>;

export class EchoResponder {
  private answered = 0;

  constructor(
    private readonly subject: string,
    private readonly malformed: MalformedInputCounter,
  ) {}

  /** Requests answered so far. */
  get echoes(): number {
    return this.answered;
  }

  /** Answers one request, or counts it as malformed; never throws. */
  handle(request: EchoRequest): void {
    try {
      if (request === null || typeof request !== 'object') throw new Error('not a NATS message');
      if (!request.reply) throw new Error('an echo request without a reply subject');
      const data = request.data;
      if (!(data instanceof Uint8Array)) throw new Error('an echo payload that is not bytes');
      if (data.length > MAX_ECHO_BYTES) throw new Error(`an echo payload of ${data.length} bytes (at most ${MAX_ECHO_BYTES})`);
      if (!request.respond(data)) throw new Error('the answer could not be sent');
      this.answered++;
    } catch (error) {
      this.refuse(error);
    }
  }

  /** Counts a request that could not be answered (or a subscription error) against the subject. */
  refuse(error: unknown): void {
    this.malformed.record(this.subject, error);
  }
}

/** Subscribes `responder` to its subject on `nc`; unsubscribe to stop. */
export function subscribeEcho(nc: NatsConnection, subject: string, responder: EchoResponder): Subscription {
  return nc.subscribe(subject, {
    callback: (error, msg) => {
      if (error) responder.refuse(error);
      else responder.handle(msg);
    },
  });
}
