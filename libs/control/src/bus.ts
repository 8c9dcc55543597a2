/**
 * The control plane's transport port: subject-addressed publish/subscribe plus request/reply, the
 * part of NATS the coordinator and the compute nodes' control code use (DESIGN §4, control
 * subjects `hb.*`, `ctl.*`). Bodies are the protobuf wire messages of `@lockfabric/wire`, already
 * encoded: the bus moves bytes and never interprets them.
 *
 * Adapters: `NatsControlBus` (libs/live) over a NatsConnection; `InMemoryControlBus` (this lib)
 * delivering through a scheduler, so under the sim's virtual clock every delivery is an ordinary
 * deterministic event.
 */
export interface ControlBus {
  /** Fire and forget: delivered to every subscription whose pattern matches, or to nobody. */
  publish(subject: string, data: Uint8Array): void;
  /**
   * `pattern` uses NATS wildcards (`*` one token, `>` the rest). The handler runs once per
   * matching message; a handler that throws is the subscriber's bug and does not stop delivery.
   */
  subscribe(pattern: string, handler: (message: BusMessage) => void): Unsubscribe;
  /**
   * One request, one reply: rejects with ControlNoRespondersError when nobody listens on
   * `subject`, ControlRequestTimeoutError when nobody answered within `timeoutMs`.
   */
  request(subject: string, data: Uint8Array, options: { readonly timeoutMs: number }): Promise<Uint8Array>;
  /**
   * Connection changes of the party using the bus (live: the NATS connection dropped or came
   * back); a coordinator that cannot hear must not accuse anyone of silence. Optional: an
   * in-memory bus never disconnects.
   */
  onStatus?(listener: (status: BusStatus) => void): Unsubscribe;
}

export type Unsubscribe = () => void;

export type BusStatus = 'disconnected' | 'reconnected';

export interface BusMessage {
  readonly subject: string;
  readonly data: Uint8Array;
  /** Present on requests: answers the requester (once; later answers are dropped). */
  readonly respond?: (data: Uint8Array) => void;
}

/** Whether `subject` matches the NATS pattern `pattern` (`*`: one token, trailing `>`: one or more). */
export function subjectMatches(pattern: string, subject: string): boolean {
  return subjectTokensMatch(pattern.split('.'), subject.split('.'));
}

/** {@link subjectMatches} over subjects already split at their dots. */
export function subjectTokensMatch(p: readonly string[], s: readonly string[]): boolean {
  for (let i = 0; i < p.length; i++) {
    const token = p[i];
    if (token === '>') return i === p.length - 1 && s.length > i;
    if (i >= s.length) return false;
    if (token !== '*' && token !== s[i]) return false;
  }
  return p.length === s.length;
}

/** Runs a bus handler, keeping its exception out of the publisher's path. */
export function deliverSafely(handler: (message: BusMessage) => void, message: BusMessage, onError?: (error: unknown) => void): void {
  try {
    handler(message);
  } catch (error) {
    onError?.(error);
  }
}
