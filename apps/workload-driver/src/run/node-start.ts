import { clone, create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { Client, credentials, status as GrpcStatus } from '@grpc/grpc-js';
import type { HistoryEvent } from '@lockfabric/check';
import { GrpcCallError, UnaryClient, rawMethodOf } from '@lockfabric/live';
import { ComputeNodeService, PrepareRunRequestSchema, RunEventSchema, RunRequestSchema } from '@lockfabric/wire';
import type { RunRequest, RunResult } from '@lockfabric/wire';
import { historyEventFromWire } from '@lockfabric/workloads';
import type { ProcessRecord } from '../cluster/local-cluster.js';
import { addressOf } from './remote-cluster.js';

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
}

export interface StartOnNodesResult {
  /** Per plan, in order; a failed node (with `tolerateNodeFailures`) contributes an empty outcome. */
  readonly outcomes: readonly NodeOutcome[];
  readonly failedNodes: readonly { readonly node: number; readonly error: string }[];
  /** Nodes that do not implement Prepare (older compute nodes): started with a one-phase Run, outside the barrier. */
  readonly unpreparedNodes: readonly number[];
}

/** A compute node refused or failed a Prepare. */
export class NodePrepareError extends Error {
  constructor(
    readonly node: number,
    message: string,
  ) {
    super(message);
    this.name = 'NodePrepareError';
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
  const failedNodes: { node: number; error: string }[] = [];
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
  const outcomes = await Promise.all(
    plans.map(async (plan, k): Promise<NodeOutcome> => {
      const request = requests[k];
      if (!request) return EMPTY;
      await options.beforeStart?.(plan.compute.node);
      const run = runOnNode(plan.compute, toBinary(RunRequestSchema, request), (ops) => options.onOps(plan.compute.node, ops));
      if (!options.tolerateNodeFailures) return run;
      return run.catch((error: unknown): NodeOutcome => {
        failedNodes.push({ node: plan.compute.node, error: error instanceof Error ? error.message : String(error) });
        return EMPTY;
      });
    }),
  );
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
    if (error instanceof GrpcCallError && error.code === GrpcStatus.UNIMPLEMENTED) return 'unimplemented';
    return new NodePrepareError(compute.node, `compute node ${compute.node} (${compute.name}) did not prepare run ${request.runId}: ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    client.close();
  }
}

/** Phase two on one node: its clients run; progress, history and result stream back. */
function runOnNode(compute: ProcessRecord, request: Uint8Array, onOps: (ops: number) => void): Promise<NodeOutcome> {
  const client = new Client(addressOf(compute, compute.grpc), credentials.createInsecure());
  const history: HistoryEvent[] = [];
  let result: RunResult | undefined;
  return new Promise<NodeOutcome>((resolve, reject) => {
    const call = client.makeServerStreamRequest(runMethod.path, runMethod.requestSerialize, runMethod.responseDeserialize, request);
    call.on('data', (bytes: Uint8Array) => {
      const event = fromBinary(RunEventSchema, bytes);
      if (event.event.case === 'progress') onOps(Number(event.event.value.opsDone));
      else if (event.event.case === 'history') for (const e of event.event.value.events) history.push(historyEventFromWire(e));
      else if (event.event.case === 'result') result = event.event.value;
    });
    call.on('error', (error: Error & { details?: string }) => reject(new Error(`compute node ${compute.node} (${compute.name}): ${error.details ?? error.message}`)));
    call.on('end', () => resolve({ history, result }));
  }).finally(() => client.close());
}
