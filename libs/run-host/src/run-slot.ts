import { equals } from '@bufbuild/protobuf';
import { RunRequestSchema } from '@lockfabric/wire';
import type { RunRequest } from '@lockfabric/wire';
import { LockFabricError, errorMessage } from '@lockfabric/ports';

/** How long a prepared run waits for its Run before the node drops it (README: "start barrier"). */
export const DEFAULT_PREPARED_TIMEOUT_MS = 60_000;

export type RunSlotPhase = 'idle' | 'preparing' | 'prepared' | 'running';

/**
 * Why the slot refused a Prepare or a Run:
 * - `busy`: a run is being prepared or is running on this node;
 * - `run-mismatch`: a Run names another run than the one prepared here;
 * - `request-differs`: same run id, but not the request it was prepared with;
 * - `not-prepared`: a Run marked `prepared` that this node does not hold prepared;
 * - `dropped`: the run was dropped (retire, close) while it was being prepared.
 */
export type RunSlotErrorCode = 'busy' | 'run-mismatch' | 'request-differs' | 'not-prepared' | 'dropped';

export class RunSlotError extends LockFabricError {
  constructor(
    readonly code: RunSlotErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'RunSlotError';
  }
}

/** Runs `action` after `delayMs`; returns its cancel. Injected so tests never wait on a wall clock. */
export type Schedule = (action: () => void, delayMs: number) => () => void;

export const realSchedule: Schedule = (action, delayMs) => {
  const timer = setTimeout(action, delayMs);
  timer.unref();
  return () => clearTimeout(timer);
};

export interface RunSlotOptions<P> {
  /** This compute node, for messages. */
  readonly node: number;
  /**
   * Builds a run's node-side state (node service, client ports); throws to refuse the request.
   * `oneShot` is set when a Run without a Prepare builds it (one-phase start): peers may be running already.
   */
  readonly prepare: (request: RunRequest, oneShot: boolean) => Promise<P>;
  /** Undoes `prepare` for a run that will never start (expired, superseded, dropped). */
  readonly discard: (prepared: P) => Promise<void> | void;
  readonly preparedTimeoutMs?: number;
  readonly schedule?: Schedule;
  /** A prepared run was dropped without starting (for the log). */
  readonly onDropped?: (runId: string, reason: string) => void;
}

type State<P> =
  | { readonly kind: 'idle' }
  | { readonly kind: 'preparing'; readonly runId: string; dropReason?: string }
  | { readonly kind: 'prepared'; readonly request: RunRequest; readonly value: P; readonly cancelExpiry: () => void }
  | { readonly kind: 'running'; readonly runId: string };

/**
 * One compute node's run slot: at most one run prepared or running at a time.
 *
 *   idle ──Prepare──▶ preparing ──▶ prepared ──Run (same request)──▶ running ──end──▶ idle
 *   idle ──Run (not marked prepared)──▶ preparing ──▶ running   (one-phase start)
 *   prepared ──timeout / drop──▶ idle (discarded)
 *   prepared ──Prepare of another run──▶ preparing (the earlier one discarded: superseded)
 *
 * A Prepare or Run while preparing or running is `busy`. The slot never runs two things at once,
 * so the owner needs no further locking around `prepare` and `discard`.
 */
export class RunSlot<P> {
  private state: State<P> = { kind: 'idle' };
  private lastDropped: { readonly runId: string; readonly reason: string } | undefined;
  private readonly timeoutMs: number;
  private readonly schedule: Schedule;

  constructor(private readonly options: RunSlotOptions<P>) {
    this.timeoutMs = options.preparedTimeoutMs ?? DEFAULT_PREPARED_TIMEOUT_MS;
    if (!(this.timeoutMs > 0)) throw new RangeError(`preparedTimeoutMs must be > 0 (got ${this.timeoutMs})`);
    this.schedule = options.schedule ?? realSchedule;
  }

  get phase(): RunSlotPhase {
    return this.state.kind;
  }

  /** The run being prepared, prepared, or running. */
  get runId(): string | undefined {
    const state = this.state;
    return state.kind === 'idle' ? undefined : state.kind === 'prepared' ? state.request.runId : state.runId;
  }

  /**
   * Phase one: prepares `request` and holds it until its Run (or the timeout). The same request
   * again is answered as it stands (a driver's retry) and re-arms the timeout; another run
   * supersedes a prepared one that has not started (its driver gave up: otherwise the node would
   * refuse every run until the timeout).
   */
  async prepare(request: RunRequest): Promise<{ runId: string; expiresInMs: number }> {
    const state = this.state;
    if (state.kind === 'preparing' || state.kind === 'running') throw this.busy(state, request.runId);
    if (state.kind === 'prepared') {
      if (state.request.runId === request.runId) {
        if (!equals(RunRequestSchema, state.request, request)) throw this.differs(request.runId, 'Prepare');
        state.cancelExpiry();
        this.state = { ...state, cancelExpiry: this.armExpiry(state.request.runId) };
        return { runId: request.runId, expiresInMs: this.timeoutMs };
      }
      state.cancelExpiry();
      const preparing: State<P> = { kind: 'preparing', runId: request.runId };
      this.state = preparing;
      await this.discard(state.request.runId, state.value, `superseded by a Prepare of run '${request.runId}'`);
      return this.finishPrepare(preparing, request);
    }
    const preparing: State<P> = { kind: 'preparing', runId: request.runId };
    this.state = preparing;
    return this.finishPrepare(preparing, request);
  }

  /**
   * Phase two (or both, for a one-phase Run): the prepared state of `request`, now running.
   * The caller runs the clients and then calls {@link end}.
   */
  async begin(request: RunRequest): Promise<P> {
    const state = this.state;
    if (state.kind === 'preparing' || state.kind === 'running') throw this.busy(state, request.runId);
    if (state.kind === 'prepared') {
      if (state.request.runId !== request.runId) {
        throw new RunSlotError('run-mismatch', `compute node ${this.options.node} holds run '${state.request.runId}' prepared; a Run of '${request.runId}' must be prepared first (or wait until '${state.request.runId}' runs or expires)`);
      }
      if (!equals(RunRequestSchema, state.request, request)) throw this.differs(request.runId, 'Run');
      state.cancelExpiry();
      this.state = { kind: 'running', runId: request.runId };
      return state.value;
    }
    if (request.prepared) {
      const dropped = this.lastDropped?.runId === request.runId ? `it was ${this.lastDropped.reason}` : 'it was never prepared here, or the node restarted since';
      throw new RunSlotError('not-prepared', `compute node ${this.options.node} does not hold run '${request.runId}' prepared (${dropped}); the driver must prepare every node again`);
    }
    // One-phase start: prepare now, run at once (not barrier-safe; see README).
    const preparing: State<P> = { kind: 'preparing', runId: request.runId };
    this.state = preparing;
    const value = await this.build(preparing, request, true);
    this.state = { kind: 'running', runId: request.runId };
    return value;
  }

  /** The running run ended (completed, failed or aborted); its node service is the owner's to keep. */
  end(): void {
    if (this.state.kind === 'running') this.state = { kind: 'idle' };
  }

  /**
   * Drops a run that has not started: a prepared one is discarded now; one being prepared is
   * discarded as soon as its preparation finishes, and that Prepare fails with `dropped`.
   * A running run is not touched (its owner aborts it).
   */
  async drop(reason: string): Promise<void> {
    const state = this.state;
    if (state.kind === 'preparing') state.dropReason = reason;
    if (state.kind !== 'prepared') return;
    state.cancelExpiry();
    this.state = { kind: 'idle' };
    await this.discard(state.request.runId, state.value, `dropped: ${reason}`);
  }

  private async finishPrepare(preparing: Extract<State<P>, { kind: 'preparing' }>, request: RunRequest): Promise<{ runId: string; expiresInMs: number }> {
    const value = await this.build(preparing, request, false);
    this.state = { kind: 'prepared', request, value, cancelExpiry: this.armExpiry(request.runId) };
    return { runId: request.runId, expiresInMs: this.timeoutMs };
  }

  /** Runs the owner's `prepare`; back to idle when it fails or the run was dropped meanwhile. */
  private async build(preparing: Extract<State<P>, { kind: 'preparing' }>, request: RunRequest, oneShot: boolean): Promise<P> {
    let value: P;
    try {
      value = await this.options.prepare(request, oneShot);
    } catch (error) {
      if (this.state === preparing) this.state = { kind: 'idle' };
      throw error;
    }
    if (preparing.dropReason !== undefined) {
      if (this.state === preparing) this.state = { kind: 'idle' };
      await this.discard(request.runId, value, `dropped: ${preparing.dropReason}`);
      throw new RunSlotError('dropped', `run '${request.runId}' was dropped on compute node ${this.options.node} while it was being prepared: ${preparing.dropReason}`);
    }
    return value;
  }

  private armExpiry(runId: string): () => void {
    return this.schedule(() => {
      const state = this.state;
      if (state.kind !== 'prepared' || state.request.runId !== runId) return;
      this.state = { kind: 'idle' };
      void this.discard(runId, state.value, `expired: no Run within ${this.timeoutMs} ms of its Prepare`);
    }, this.timeoutMs);
  }

  private async discard(runId: string, value: P, reason: string): Promise<void> {
    this.lastDropped = { runId, reason };
    this.options.onDropped?.(runId, reason);
    try {
      await this.options.discard(value);
    } catch (error) {
      // The run is gone either way; a node service that fails to stop must not fail the next Prepare.
      this.options.onDropped?.(runId, `discarding it failed: ${errorMessage(error)}`);
    }
  }

  private busy(state: Extract<State<P>, { kind: 'preparing' | 'running' }>, wanted: string): RunSlotError {
    const doing = state.kind === 'running' ? 'running' : 'preparing';
    return new RunSlotError('busy', `compute node ${this.options.node} is already ${doing} run '${state.runId}'; '${wanted}' must wait until it ends`);
  }

  private differs(runId: string, call: 'Prepare' | 'Run'): RunSlotError {
    return new RunSlotError('request-differs', `${call} of run '${runId}' on compute node ${this.options.node} differs from the request it was prepared with (same run id, other workload, peers or options)`);
  }
}
