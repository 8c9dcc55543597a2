import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { CutRelay, HealReport } from './cut-relay.js';
import { isSubjectPattern } from './nats-delivery-filter.js';
import { LockFabricError, errorMessage } from '@lockfabric/ports';

/** Largest control request body; a cut or heal order is a few dozen bytes. */
const MAX_BODY_BYTES = 4_096;
/** Longest cut one order may ask for (an hour): a forgotten cut heals by itself. */
export const MAX_CUT_MS = 3_600_000;
/** Processes cut off at once, at most (a cluster has a handful; the bound keeps the timer table small). */
export const MAX_CONCURRENT_CUTS = 256;
/** Process names the relay can cut (what cluster.json calls them). */
const PROCESS_NAME = /^[a-z]+(?:-\d+)?$/;

/** `POST /cut`: cut `target` off for `durationMs`, then heal it. */
export interface CutOrder {
  readonly target: string;
  readonly durationMs: number;
}

/** A control request the proxy refused; `status` is the HTTP status it answered with. */
export class CutControlInputError extends LockFabricError {
  readonly code = 'CUT_CONTROL_INPUT';
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'CutControlInputError';
  }
}

/** Validates a cut order's JSON body; throws CutControlInputError (400) naming every problem. */
export function parseCutOrder(body: string): CutOrder {
  const value = parseJson(body);
  const problems: string[] = [];
  const target = value['target'];
  const durationMs = value['durationMs'];
  if (typeof target !== 'string' || !PROCESS_NAME.test(target)) problems.push(`target: a process name such as compute-2, got ${JSON.stringify(target)}`);
  if (typeof durationMs !== 'number' || !Number.isInteger(durationMs) || durationMs < 1 || durationMs > MAX_CUT_MS) problems.push(`durationMs: an integer from 1 to ${MAX_CUT_MS}, got ${JSON.stringify(durationMs)}`);
  if (problems.length > 0) throw new CutControlInputError(400, problems.join('; '));
  return { target: target as string, durationMs: durationMs as number };
}

/** `POST /drop`: drop NATS deliveries to `target` on `subjects` (full patterns) for `durationMs`. */
export interface DropOrder extends CutOrder {
  readonly subjects: readonly string[];
}

/** Most subject patterns in one drop order. */
export const MAX_DROP_SUBJECTS = 16;

/** Validates a drop order's JSON body; throws CutControlInputError (400) naming every problem. */
export function parseDropOrder(body: string): DropOrder {
  const value = parseJson(body);
  const subjects = value['subjects'];
  const problems: string[] = [];
  let order: CutOrder | undefined;
  try {
    order = parseCutOrder(JSON.stringify({ target: value['target'], durationMs: value['durationMs'] }));
  } catch (error) {
    problems.push((error as Error).message);
  }
  if (!Array.isArray(subjects) || subjects.length === 0 || subjects.length > MAX_DROP_SUBJECTS) problems.push(`subjects: 1 to ${MAX_DROP_SUBJECTS} NATS subject patterns, got ${JSON.stringify(subjects)}`);
  else for (const s of subjects) if (typeof s !== 'string' || !isSubjectPattern(s)) problems.push(`subjects: ${JSON.stringify(s)} is not a NATS subject pattern (tokens, *, a final >)`);
  if (problems.length > 0 || !order) throw new CutControlInputError(400, problems.join('; '));
  return { ...order, subjects: subjects as string[] };
}

/** Validates a heal order's JSON body (`{"target": …}`). */
export function parseHealOrder(body: string): { readonly target: string } {
  const target = parseJson(body)['target'];
  if (typeof target !== 'string' || !PROCESS_NAME.test(target)) throw new CutControlInputError(400, `target: a process name such as compute-2, got ${JSON.stringify(target)}`);
  return { target };
}

function parseJson(body: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (error) {
    throw new CutControlInputError(400, `body is not JSON: ${errorMessage(error)}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new CutControlInputError(400, 'body must be a JSON object');
  return value as Record<string, unknown>;
}

export interface CutControlServer {
  readonly port: number;
  close(): Promise<void>;
}

/**
 * The proxy's control endpoint on 127.0.0.1: `POST /cut {target, durationMs}` cuts a process off
 * and heals it by itself after the duration (so a cut survives the death of whoever ordered it
 * only that long), `POST /drop {target, subjects, durationMs}` drops the NATS deliveries to it on
 * those subjects for the duration (a partial partition), `POST /heal {target}` ends both now, `GET /status` lists cuts and connections,
 * `GET /readyz` answers 200 once the relay listens. Bad input gets a 4xx naming the problem.
 */
export async function startCutControl(relay: CutRelay, port = 0, onEvent: (line: string) => void = () => undefined): Promise<CutControlServer> {
  const timers = new Map<string, NodeJS.Timeout>();
  const heal = (target: string): HealReport => {
    clearTimeout(timers.get(target));
    timers.delete(target);
    const report = relay.heal(target);
    const drops = report.droppedMessages !== undefined ? `, ${report.droppedMessages} message(s) dropped by its partial partition` : '';
    onEvent(`healed ${target}: ${report.connections} connection(s), ${report.releasedBytes} held byte(s) released${drops}`);
    return report;
  };
  /** Applies an order and arms its self-heal (one timer per target: a new order replaces the old one's). */
  const orderHeal = (order: CutOrder, apply: () => number): number => {
    if (!timers.has(order.target) && timers.size >= MAX_CONCURRENT_CUTS) throw new CutControlInputError(429, `${MAX_CONCURRENT_CUTS} processes are cut off already; heal one first`);
    const connections = apply();
    clearTimeout(timers.get(order.target));
    const timer = setTimeout(() => heal(order.target), order.durationMs);
    timer.unref();
    timers.set(order.target, timer);
    return connections;
  };
  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const route = `${request.method ?? ''} ${(request.url ?? '').split('?')[0] ?? ''}`;
    switch (route) {
      case 'GET /readyz':
        return reply(response, 200, { ready: true });
      case 'GET /status':
        return reply(response, 200, relay.status());
      case 'POST /cut': {
        const order = parseCutOrder(await readBody(request));
        const connections = orderHeal(order, () => relay.cut(order.target));
        onEvent(`cut ${order.target} off for ${order.durationMs} ms: ${connections} connection(s)`);
        return reply(response, 200, { target: order.target, durationMs: order.durationMs, connections });
      }
      case 'POST /drop': {
        const order = parseDropOrder(await readBody(request));
        const connections = orderHeal(order, () => relay.dropSubjects(order.target, order.subjects));
        onEvent(`dropping NATS deliveries to ${order.target} on ${order.subjects.join(', ')} for ${order.durationMs} ms: ${connections} NATS connection(s)`);
        return reply(response, 200, { target: order.target, durationMs: order.durationMs, subjects: order.subjects, connections });
      }
      case 'POST /heal':
        return reply(response, 200, heal(parseHealOrder(await readBody(request)).target));
      default:
        throw new CutControlInputError(404, `no such control request: ${route} (GET /status, GET /readyz, POST /cut, POST /drop, POST /heal)`);
    }
  };
  const server: Server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      const status = error instanceof CutControlInputError ? error.status : 500;
      reply(response, status, { error: errorMessage(error) });
    });
  });
  const bound = await new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      resolve(typeof address === 'object' && address ? address.port : port);
    });
  });
  return {
    port: bound,
    close: async () => {
      for (const timer of timers.values()) clearTimeout(timer);
      timers.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function reply(response: ServerResponse, status: number, body: unknown): void {
  if (response.headersSent) return;
  // A fresh connection per order: a heal sent about 5 s after its cut could otherwise reuse the
  // keep-alive socket just as the server's idle timer closed it ("other side closed", nodejs/undici#3141).
  response.writeHead(status, { 'content-type': 'application/json', connection: 'close' });
  response.end(JSON.stringify(body) + '\n');
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > MAX_BODY_BYTES) throw new CutControlInputError(413, `body larger than ${MAX_BODY_BYTES} bytes`);
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}
