import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { decodeTraceRequestJson, decodeTraceRequestProtobuf } from './traces.js';
import type { ReceivedSpan } from './traces.js';
import { decodeMetricsRequestProtobuf } from './metrics.js';
import type { ReceivedMetric } from './metrics.js';
import { OtlpDecodeError } from './values.js';
import { LockFabricError } from '@lockfabric/ports';
import { TestServerError } from '../test-server-error.js';

export interface OtlpReceiverOptions {
  /** Interface to bind; loopback by default. */
  readonly host?: string;
  /** 0 (default) picks a free port. */
  readonly port?: number;
  /** Request bodies above this are refused with 413. */
  readonly maxBodyBytes?: number;
}

export interface OtlpReceiver {
  /** Base URL to use as OTEL_EXPORTER_OTLP_ENDPOINT, e.g. `http://127.0.0.1:43817`. */
  readonly endpoint: string;
  /** Full traces URL, `<endpoint>/v1/traces`. */
  readonly tracesUrl: string;
  /** Every span received so far, in arrival order. */
  readonly spans: readonly ReceivedSpan[];
  /** Full metrics URL, `<endpoint>/v1/metrics`. */
  readonly metricsUrl: string;
  /** Every metric received so far (one entry per metric per export), in arrival order. */
  readonly metrics: readonly ReceivedMetric[];
  /** Metrics export requests accepted so far. */
  readonly metricRequests: number;
  /** Requests refused as malformed (bad body, wrong content type). */
  readonly rejectedRequests: number;
  /** The status each metrics request was answered with, in order: 200 when accepted, else a scripted one. */
  readonly metricStatuses: readonly number[];
  /**
   * Answers the next metrics requests with these, in order, instead of accepting them: a status
   * (with `Retry-After` when given), or `hang` to leave the request unanswered until the client
   * gives up or the receiver closes. For tests of an exporter's retries and drops.
   */
  scriptMetricAnswers(answers: readonly OtlpScriptedAnswer[]): void;
  /**
   * Resolves with the received spans once `predicate` holds for them; rejects after `timeoutMs`
   * with an error naming what did arrive.
   */
  waitForSpans(predicate: (spans: readonly ReceivedSpan[]) => boolean, timeoutMs: number): Promise<readonly ReceivedSpan[]>;
  /** Like {@link waitForSpans}, for the metrics received so far. */
  waitForMetrics(predicate: (metrics: readonly ReceivedMetric[]) => boolean, timeoutMs: number): Promise<readonly ReceivedMetric[]>;
  close(): Promise<void>;
}

export type OtlpScriptedAnswer = { readonly status: number; readonly retryAfterSeconds?: number } | 'hang';

const TRACES_PATH = '/v1/traces';
const METRICS_PATH = '/v1/metrics';
const DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024;

interface Waiter {
  /** Checks the received spans or metrics, whichever it waits for. */
  readonly ready: () => boolean;
  readonly resolve: () => void;
}

/**
 * An OTLP/HTTP receiver for tests: accepts `POST /v1/traces` as `application/x-protobuf` or
 * `application/json`, and `POST /v1/metrics` as `application/x-protobuf` (optionally
 * gzip-encoded), and keeps the spans and metrics with their service name.
 */
export async function startOtlpReceiver(options: OtlpReceiverOptions = {}): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const metrics: ReceivedMetric[] = [];
  let metricRequests = 0;
  const waiters = new Set<Waiter>();
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  let rejectedRequests = 0;
  const metricStatuses: number[] = [];
  const scripted: OtlpScriptedAnswer[] = [];

  const notify = (): void => {
    for (const waiter of waiters) {
      if (waiter.ready()) {
        waiters.delete(waiter);
        waiter.resolve();
      }
    }
  };

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const path = (request.url ?? '').split('?')[0];
    if (path !== TRACES_PATH && path !== METRICS_PATH) return reply(response, 404, 'text/plain', 'not found');
    if (request.method !== 'POST') return reply(response, 405, 'text/plain', 'method not allowed');
    const contentType = (request.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
    let body: Buffer;
    try {
      body = await readBody(request, maxBodyBytes);
    } catch (error) {
      rejectedRequests++;
      return reply(response, error instanceof BodyTooLargeError ? 413 : 400, 'text/plain', String(error));
    }
    try {
      if (request.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
      if (path === METRICS_PATH) {
        const answer = scripted.shift();
        if (answer === 'hang') return;
        if (answer !== undefined) {
          metricStatuses.push(answer.status);
          const retryAfter = answer.retryAfterSeconds === undefined ? {} : { 'retry-after': String(answer.retryAfterSeconds) };
          response.writeHead(answer.status, { 'content-type': 'text/plain', ...retryAfter });
          response.end(`scripted answer ${answer.status}`);
          return;
        }
        if (contentType !== 'application/x-protobuf') {
          rejectedRequests++;
          return reply(response, 415, 'text/plain', `metrics are accepted as application/x-protobuf only, got ${contentType ?? ''}`);
        }
        metrics.push(...decodeMetricsRequestProtobuf(body));
        metricRequests++;
        metricStatuses.push(200);
        reply(response, 200, 'application/x-protobuf', new Uint8Array(0));
      } else if (contentType === 'application/x-protobuf') {
        spans.push(...decodeTraceRequestProtobuf(body));
        reply(response, 200, 'application/x-protobuf', new Uint8Array(0));
      } else if (contentType === 'application/json') {
        spans.push(...decodeTraceRequestJson(body.toString('utf8')));
        reply(response, 200, 'application/json', '{}');
      } else {
        rejectedRequests++;
        return reply(response, 415, 'text/plain', `unsupported content type ${contentType ?? ''}`);
      }
    } catch (error) {
      rejectedRequests++;
      const message = error instanceof OtlpDecodeError ? error.message : `bad request body: ${String(error)}`;
      return reply(response, 400, 'text/plain', message);
    }
    notify();
  };

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) reply(response, 500, 'text/plain', String(error));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const endpoint = `http://${host}:${address.port}`;
  let closed: Promise<void> | undefined;

  const waitFor = <T>(items: readonly T[], predicate: (items: readonly T[]) => boolean, timeoutMs: number, seen: () => string): Promise<readonly T[]> => {
    if (predicate(items)) return Promise.resolve(items);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        waiters.delete(waiter);
        reject(new TestServerError(`OTLP receiver: condition not met within ${timeoutMs} ms; ${seen()}`));
      }, timeoutMs);
      const waiter: Waiter = {
        ready: () => predicate(items),
        resolve: () => {
          clearTimeout(timer);
          resolve(items);
        },
      };
      waiters.add(waiter);
    });
  };

  return {
    endpoint,
    tracesUrl: `${endpoint}${TRACES_PATH}`,
    metricsUrl: `${endpoint}${METRICS_PATH}`,
    spans,
    metrics,
    get metricRequests() {
      return metricRequests;
    },
    get rejectedRequests() {
      return rejectedRequests;
    },
    metricStatuses,
    scriptMetricAnswers(answers) {
      scripted.push(...answers);
    },
    waitForSpans(predicate, timeoutMs) {
      return waitFor(spans, predicate, timeoutMs, () => `received spans: ${spans.map((span) => `${span.serviceName ?? '?'}:${span.name}`).join(', ') || 'none'}`);
    },
    waitForMetrics(predicate, timeoutMs) {
      return waitFor(metrics, predicate, timeoutMs, () => `received metrics: ${[...new Set(metrics.map((m) => `${m.serviceName ?? '?'}:${m.name}`))].join(', ') || 'none'}`);
    },
    close() {
      closed ??= new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        // Exporters keep connections alive; close them so the server can stop now.
        server.closeAllConnections();
      });
      return closed;
    },
  };
}

class BodyTooLargeError extends LockFabricError {
  readonly code = 'BODY_TOO_LARGE';
  constructor(limit: number) {
    super(`request body exceeds ${limit} bytes`);
    this.name = 'BodyTooLargeError';
  }
}

function readBody(request: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        reject(new BodyTooLargeError(limit));
        request.resume();
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => resolve(Buffer.concat(chunks)));
    request.on('error', reject);
  });
}

function reply(response: ServerResponse, status: number, contentType: string, body: string | Uint8Array): void {
  response.writeHead(status, { 'content-type': contentType });
  response.end(body);
}
