import { LockFabricError } from '@lockfabric/ports';

/** No nats-server binary could be found; the message says where we looked. */
export class NatsServerNotFoundError extends LockFabricError {
  readonly code = 'NATS_SERVER_NOT_FOUND';
  constructor(readonly searched: readonly string[]) {
    super(`nats-server not found (looked at ${searched.join(', ')}); install it (apt-get install nats-server, or https://nats.io) or set NATS_SERVER_BIN`);
  }
}

/** nats-server exited or did not report listening in time; `output` is the tail of its log. */
export class NatsServerStartError extends LockFabricError {
  readonly code = 'NATS_SERVER_START';
  constructor(
    message: string,
    readonly output: string,
    /** Whether the process is gone (its port was most often taken: another port may succeed). */
    readonly exited: boolean,
  ) {
    super(output ? `${message}\n--- nats-server output ---\n${output}` : message);
  }
}
