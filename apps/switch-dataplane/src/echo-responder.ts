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
      const problem = echoProblem(request);
      if (problem !== undefined) return this.refuse(problem);
      if (!request.respond(request.data)) return this.refuse('the answer could not be sent');
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

/** Why `request` cannot be echoed, or undefined when it can. */
function echoProblem(request: EchoRequest): string | undefined {
  if (request === null || typeof request !== 'object') return 'not a NATS message';
  if (!request.reply) return 'an echo request without a reply subject';
  const data: unknown = request.data;
  if (!(data instanceof Uint8Array)) return 'an echo payload that is not bytes';
  if (data.length > MAX_ECHO_BYTES) return `an echo payload of ${data.length} bytes (at most ${MAX_ECHO_BYTES})`;
  return undefined;
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
