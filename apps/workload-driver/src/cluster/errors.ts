import { LockFabricError } from '@lockfabric/ports';

/** A program the command needs (nats-server, redis-server) is not installed; the message says how to get it. */
export class MissingToolError extends LockFabricError {
  readonly code = 'TOOL_MISSING';
  constructor(
    readonly tool: string,
    message: string,
  ) {
    super(message);
  }
}

/** An app the command starts has not been built (its dist entry point is missing). */
export class NotBuiltError extends LockFabricError {
  readonly code = 'NOT_BUILT';
}

/** A process of a local cluster (a service, redis-server, the cut proxy) could not start or get ready. */
export class ProcessStartError extends LockFabricError {
  readonly code = 'PROCESS_START';
  constructor(
    readonly processName: string,
    message: string,
  ) {
    super(message);
  }
}

/** The cluster directory's state does not allow the request (a cluster already runs, cluster.json unreadable, no identity). */
export class ClusterStateError extends LockFabricError {
  readonly code = 'CLUSTER_STATE';
}
