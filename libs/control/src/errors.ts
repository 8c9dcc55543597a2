import { LockFabricError } from '@lockfabric/ports';

/** A request on the control bus got no reply within its timeout. */
export class ControlRequestTimeoutError extends LockFabricError {
  readonly code = 'CONTROL_REQUEST_TIMEOUT';
  constructor(
    readonly subject: string,
    readonly timeoutMs: number,
  ) {
    super(`no reply on ${subject} within ${timeoutMs} ms`);
  }
}

/** A request on the control bus found nobody subscribed to its subject (NATS: 503 no responders). */
export class ControlNoRespondersError extends LockFabricError {
  readonly code = 'CONTROL_NO_RESPONDERS';
  constructor(readonly subject: string) {
    super(`no responders on ${subject}`);
  }
}

/** The control bus (or the party using it) was closed. */
export class ControlBusClosedError extends LockFabricError {
  readonly code = 'CONTROL_BUS_CLOSED';
  constructor(readonly subject: string) {
    super(`control bus closed (${subject})`);
  }
}

/** A subject or subject pattern the bus cannot route (empty token, `>` not last). */
export class ControlSubjectError extends LockFabricError {
  readonly code = 'CONTROL_SUBJECT';
  constructor(
    readonly subject: string,
    detail: string,
  ) {
    super(`subject ${JSON.stringify(subject)}: ${detail}`);
  }
}

/** Queue-lock recovery found no surviving compute node that runs the protocol, so nothing can reset the lock table. */
export class QueueRecoveryNoResetterError extends LockFabricError {
  readonly code = 'QUEUE_RECOVERY_NO_RESETTER';
  constructor(readonly epoch: bigint) {
    super(`queue-lock recovery (epoch ${epoch}): no survivor to reset the lock table through`);
  }
}
