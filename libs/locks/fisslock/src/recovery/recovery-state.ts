import type { LockId, LockMode, NodeId } from '@lockfabric/ports';

/**
 * Plain data exchanged by FissLock recovery (spec §7.2): what every surviving server reports in S1,
 * and what S2 decides. Nothing here refers to a pool, a socket or a clock, so the same values
 * travel in-process (sim) and over the wire (live, as JSON).
 */

/** One lock request as the agents key it: the requester's machine and its task key (client << 20 | rid). */
export interface RequestRef {
  readonly mid: NodeId;
  readonly task: number;
}

export interface QueuedRequest extends RequestRef {
  readonly mode: LockMode;
}

/** An agent as a server reports it in S1; `pending` is an agent removed while its FREE / transfer GRANT was unconfirmed. */
export interface AgentRecord {
  readonly lid: LockId;
  /** Machine the agent lives on (the reporting server). */
  readonly machine: NodeId;
  readonly mode: LockMode;
  readonly holders: readonly RequestRef[];
  readonly wqueue: readonly QueuedRequest[];
  readonly state: 'live' | 'pending';
}

/**
 * A client's own view of one request (spec §2.3): it holds the lock, it waits for a grant, or it
 * gave up (its attempt timed out and its abort is not resolved yet).
 */
export type ClientRequestState = 'granted' | 'pending' | 'aborting';

export interface ClientRecord extends QueuedRequest {
  readonly lid: LockId;
  readonly state: ClientRequestState;
  /** When the request was issued (ordering of waiters the agents never saw, step 3). */
  readonly startNs: number;
}

/** S1: one surviving server's agents and clients. */
export interface ServerReport {
  readonly machine: NodeId;
  readonly agents: readonly AgentRecord[];
  readonly clients: readonly ClientRecord[];
}

export interface RepairInput {
  /** Machines declared failed; a machine that sent no report counts as failed too. */
  readonly failed: readonly NodeId[];
  readonly reports: readonly ServerReport[];
}

/** The agent S2 decides for a held lock (step 6: incarnation 0). */
export interface RepairedAgent {
  readonly lid: LockId;
  readonly machine: NodeId;
  readonly mode: LockMode;
  readonly holders: readonly QueuedRequest[];
  readonly wqueue: readonly QueuedRequest[];
  readonly inca: 0;
}

export interface TaskOrder extends QueuedRequest {
  readonly lid: LockId;
}

export interface AbortOrder extends RequestRef {
  readonly lid: LockId;
  readonly reason: string;
}

/** S2's result: one agent per held lock (every other lock is free), tasks to wake, requests to fail. */
export interface RepairPlan {
  readonly survivors: readonly NodeId[];
  readonly failed: readonly NodeId[];
  readonly agents: readonly RepairedAgent[];
  /** Requests that hold the lock now but whose client still waits (lost or in-flight GRANT, or granted by step 5). */
  readonly wake: readonly TaskOrder[];
  /** Surviving requests that S2 drops: their client must see LockAbortedError (or has already given up). */
  readonly abort: readonly AbortOrder[];
}

/** What one machine must apply in S2: its agents (all others deleted), wakes and aborts. */
export interface MachineOrders {
  readonly machine: NodeId;
  readonly agents: readonly RepairedAgent[];
  readonly wake: readonly TaskOrder[];
  readonly abort: readonly AbortOrder[];
}

/** `mid:task`, as agents and messages name a request. */
export function requestKey(r: RequestRef): string {
  return `${r.mid}:${r.task}`;
}

/** The same identity as one number (mid < 2^8, task < 2^32: exact in a double), for hot maps. */
export function requestId(r: RequestRef): number {
  return r.mid * 0x1_0000_0000 + r.task;
}
