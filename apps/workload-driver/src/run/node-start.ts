import { clone, create, toBinary } from '@bufbuild/protobuf';
import { Client, status as GrpcStatus } from '@grpc/grpc-js';
import type { HistoryEvent } from '@lockfabric/check';
import { GrpcCallError, UnaryClient, clientChannelOptions, clientCredentials, rawMethodOf } from '@lockfabric/live';
import { ComputeNodeService, PrepareRunRequestSchema, RunRequestSchema } from '@lockfabric/wire';
import type { RunRequest, RunResult } from '@lockfabric/wire';
import type { ProcessRecord } from '../cluster/local-cluster.js';
import { addressOf } from './remote-cluster.js';
import { RunEventReader } from './history-decoding.js';
import { LockFabricError, errorMessage } from '@lockfabric/ports';

/** How long the driver waits for one node's Prepare (the nodes keep a prepared run 60 s by default: longer). */
export const DEFAULT_PREPARE_TIMEOUT_MS = 30_000;

/** One compute node's part of a run: where it is and what it runs. */
export interface NodeRunPlan {
  readonly compute: ProcessRecord;
  readonly request: RunRequest;
}

export interface NodeOutcome {
  readonly history: HistoryEvent[];
  readonly result: RunResult | undefined;
  /** Set when the node's run stream broke (it died, or its connection did): what the driver had by then. */
  readonly failure?: NodeRunFailure;
}

/** A compute node whose run did not end with a result. */
export interface NodeRunFailure {
  readonly node: number;
  readonly name: string;
  readonly error: string;
  /** When the driver saw the stream break (machine clock, the histories' time base). */
  readonly observedAtNs: number;
  /** Acquires the node last reported done (progress ticks), and history events received from it. */
  readonly opsReported: number;
  readonly historyEvents: number;
  /** Time of the last history event received from it; undefined when none arrived. */
  readonly lastEventNs?: number;
}

export interface StartOnNodesOptions {
  /** Two-phase start: every node prepared before any node runs (false: one-phase Runs, as older drivers did). */
  readonly barrier: boolean;
  readonly prepareTimeoutMs?: number;
  /** A node that fails (to prepare or to run) is reported in `failedNodes` instead of failing the run. */
  readonly tolerateNodeFailures: boolean;
  /** Awaited before the Run of `node` is sent — after every node was prepared when `barrier` is set. */
  readonly beforeStart?: (node: number) => Promise<void>;
  readonly onOps: (node: number, ops: number) => void;
  /**
   * With `tolerateNodeFailures`: once every other node has finished, how long a node that neither
   * answers nor fails (paused, cut off) may take before its stream is cancelled and it counts as
   * failed (default DEFAULT_STRAGGLER_GRACE_MS).
   */
  readonly stragglerGraceMs?: number;
  /**
   * With `tolerateNodeFailures`: a node that has neither finished nor failed this long after the
   * Runs were sent is given up on (a time-bounded run passes its duration plus the grace).
   */
  readonly runDeadlineMs?: number;
  /** The histories' clock (machine time base), to stamp when a failure was seen. */
  readonly nowNs?: () => number;
}

/** How long a run waits for a silent node after all others finished (it may be paused past its detection). */
export const DEFAULT_STRAGGLER_GRACE_MS = 20_000;

/** A node that failed to prepare or to run; `run` is set when it failed mid-run. */
export interface FailedNode {
  readonly node: number;
  readonly error: string;
  readonly run?: NodeRunFailure;
}

export interface StartOnNodesResult {
  /** Per plan, in order; a failed node (with `tolerateNodeFailures`) contributes an empty outcome. */
  readonly outcomes: readonly NodeOutcome[];
  readonly failedNodes: readonly FailedNode[];
  /** Nodes that do not implement Prepare (older compute nodes): started with a one-phase Run, outside the barrier. */
  readonly unpreparedNodes: readonly number[];
}

/** A compute node refused or failed a Prepare. */
export class NodePrepareError extends LockFabricError {
  readonly code = 'NODE_PREPARE';
  constructor(
    readonly node: number,
    message: string,
  ) {
    super(message);
    this.name = 'NodePrepareError';
  }
}

/** A compute node's run failed (and the run does not tolerate node failures); the message is the node's. */
export class NodeRunError extends LockFabricError {
  readonly code = 'NODE_RUN';
  constructor(
    readonly node: number,
    message: string,
  ) {
    super(message);
  }
}

const EMPTY: NodeOutcome = { history: [], result: undefined };
const runMethod = rawMethodOf(ComputeNodeService.method.run);

/**
 * Starts a run on compute nodes. With the barrier, phase one prepares every node (each stops its
 * previous run's node service and installs this run's) and phase two sends the Runs only once all
 * answered, so no client of this run can reach a node that still serves the previous run.
 */
export async function startOnNodes(plans: readonly NodeRunPlan[], options: StartOnNodesOptions): Promise<StartOnNodesResult> {
  const failedNodes: FailedNode[] = [];
  const unpreparedNodes: number[] = [];
  const requests: (RunRequest | undefined)[] = plans.map((p) => (options.barrier ? markPrepared(p.request) : p.request));
  if (options.barrier) {
    const answers = await Promise.all(plans.map((plan, k) => prepareOnNode(plan.compute, requests[k]!, options.prepareTimeoutMs ?? DEFAULT_PREPARE_TIMEOUT_MS)));
    const refused = answers.flatMap((answer, k) => (answer instanceof NodePrepareError ? [{ k, error: answer }] : []));
    if (refused.length > 0 && !options.tolerateNodeFailures) {
      // Nodes prepared meanwhile keep their run until the next Prepare supersedes it or it expires.
      throw new NodePrepareError(refused[0]!.error.node, refused.map((r) => r.error.message).join('; '));
    }
    for (const { k, error } of refused) {
      failedNodes.push({ node: error.node, error: error.message });
      requests[k] = undefined;
    }
    answers.forEach((answer, k) => {
      if (answer !== 'unimplemented') return;
      unpreparedNodes.push(plans[k]!.compute.node);
      // An older node runs one-phase; it also refuses a run without clients, which it never got before.
      const request = plans[k]!.request;
      requests[k] = request.spec && request.spec.clients > 0 ? request : undefined;
    });
  }
  const nowNs = options.nowNs ?? (() => Date.now() * 1e6);
  const graceMs = options.stragglerGraceMs ?? DEFAULT_STRAGGLER_GRACE_MS;
  const running: NodeRunStream[] = [];
  let stragglers: NodeJS.Timeout | undefined;
  const giveUp = (why: string) => {
    for (const r of running) if (!r.done) r.cancel(why);
  };
  // Each stream that ends with a result (re)arms one timer: a node silent for the grace after the
  // last one finished (paused, cut off) is given up on, so a fault never hangs an operation-bounded
  // run. A failed stream arms nothing: the others may still have most of their run ahead of them.
  // A run bounded by time arms nothing either: a node that finished early (fenced after a pause
  // outlasting detection, say) tells nothing of the others, which have until the run's deadline.
  // Before, a nemesis run's last survivor was cancelled 20 s after a fenced node finished.
  const ended = (outcome: NodeOutcome) => {
    if (outcome.failure || options.runDeadlineMs !== undefined) return;
    if (stragglers) clearTimeout(stragglers);
    if (running.every((r) => r.done)) return;
    stragglers = setTimeout(() => giveUp(`no result ${graceMs} ms after the last other compute node finished (paused or cut off?)`), graceMs);
  };
  // A run bounded by time has a deadline of its own, for when no node finishes normally at all.
  const deadline =
    options.tolerateNodeFailures && options.runDeadlineMs !== undefined
      ? setTimeout(() => giveUp(`no result ${options.runDeadlineMs} ms after the run started (paused or cut off?)`), options.runDeadlineMs)
      : undefined;
  const outcomes = await Promise.all(
    plans.map(async (plan, k): Promise<NodeOutcome> => {
      const request = requests[k];
      if (!request) return EMPTY;
      await options.beforeStart?.(plan.compute.node);
      const run = runOnNode(plan.compute, toBinary(RunRequestSchema, request), (ops) => options.onOps(plan.compute.node, ops), nowNs);
      running.push(run);
      const outcome = await run.outcome;
      if (options.tolerateNodeFailures) ended(outcome);
      if (!outcome.failure) return outcome;
      if (!options.tolerateNodeFailures) throw new NodeRunError(outcome.failure.node, outcome.failure.error);
      failedNodes.push({ node: outcome.failure.node, error: outcome.failure.error, run: outcome.failure });
      return outcome;
    }),
  ).finally(() => {
    clearTimeout(stragglers);
    clearTimeout(deadline);
  });
  return { outcomes, failedNodes, unpreparedNodes };
}

/** The request a barrier run sends both as Prepare and as Run: a node that lost it must refuse the Run. */
function markPrepared(request: RunRequest): RunRequest {
  const marked = clone(RunRequestSchema, request);
  marked.prepared = true;
  return marked;
}

/** Phase one on one node: `prepared`, `unimplemented` (an older node), or the node's refusal. */
async function prepareOnNode(compute: ProcessRecord, request: RunRequest, timeoutMs: number): Promise<'prepared' | 'unimplemented' | NodePrepareError> {
  const client = new UnaryClient(addressOf(compute, compute.grpc), timeoutMs);
  try {
    await client.call(ComputeNodeService.method.prepare, create(PrepareRunRequestSchema, { run: request }));
    return 'prepared';
  } catch (error) {
    if (error instanceof GrpcCallError && error.status === GrpcStatus.UNIMPLEMENTED) return 'unimplemented';
    return new NodePrepareError(compute.node, `compute node ${compute.node} (${compute.name}) did not prepare run ${request.runId}: ${errorMessage(error)}`);
  } finally {
    client.close();
  }
}

/** A started run stream: its outcome, and a way to give up on it. */
interface NodeRunStream {
  readonly outcome: Promise<NodeOutcome>;
  done: boolean;
  cancel(reason: string): void;
}

/**
 * Phase two on one node: its clients run; progress, history and result stream back. The history
 * arrives during the run, so when the stream breaks the outcome keeps what came before, with the
 * failure; it never rejects.
 */
function runOnNode(compute: ProcessRecord, request: Uint8Array, onOps: (ops: number) => void, nowNs: () => number): NodeRunStream {
  const client = new Client(addressOf(compute, compute.grpc), clientCredentials(), clientChannelOptions());
  const history: HistoryEvent[] = [];
  const reader = new RunEventReader(`grpc ${runMethod.path} from ${compute.name}`);
  let result: RunResult | undefined;
  let opsReported = 0;
  let cancelled: string | undefined;
  const call = client.makeServerStreamRequest(runMethod.path, runMethod.requestSerialize, runMethod.responseDeserialize, request);
  const stream: NodeRunStream = {
    done: false,
    outcome: new Promise<NodeOutcome>((resolve) => {
      const fail = (message: string) => {
        const lastEventNs = history.at(-1)?.timeNs;
        const failure: NodeRunFailure = {
          node: compute.node,
          name: compute.name,
          error: `compute node ${compute.node} (${compute.name}): ${message}`,
          observedAtNs: nowNs(),
          opsReported,
          historyEvents: history.length,
          ...(lastEventNs !== undefined ? { lastEventNs } : {}),
        };
        resolve({ history, result: undefined, failure });
      };
      call.on('data', (bytes: Uint8Array) => {
        try {
          const decoded = reader.read(bytes);
          if (decoded.kind === 'history') for (const e of decoded.events) history.push(e);
          else if (decoded.event.event.case === 'progress') onOps((opsReported = Number(decoded.event.event.value.opsDone)));
          else if (decoded.event.event.case === 'result') result = decoded.event.event.value;
        } catch (error) {
          call.cancel();
          fail(`undecodable run event: ${errorMessage(error)}`);
        }
      });
      call.on('error', (error: Error & { details?: string }) => fail(cancelled ?? error.details ?? error.message));
      call.on('end', () => (result ? resolve({ history, result }) : fail(cancelled ?? 'the run stream ended without a result')));
    }).finally(() => {
      stream.done = true;
      client.close();
    }),
    cancel(reason: string) {
      cancelled = reason;
      call.cancel();
    },
  };
  return stream;
}
