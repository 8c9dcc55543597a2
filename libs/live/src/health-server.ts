import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { errorMessage } from '@lockfabric/ports';

export interface HealthServerOptions {
  /** 0 picks a free port. */
  readonly port: number;
  readonly host?: string;
  /** Readiness: serving requests now. Liveness (/healthz) is "the event loop answers". */
  readonly ready?: () => boolean | Promise<boolean>;
  /** Prometheus text exposition for /metrics. */
  readonly metrics?: () => string | Promise<string>;
}

export interface HealthServer {
  readonly port: number;
  readonly url: string;
  close(): Promise<void>;
}

const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** /healthz, /readyz and /metrics for Kubernetes probes and Prometheus scrapes. */
export async function startHealthServer(options: HealthServerOptions): Promise<HealthServer> {
  // `connection: close` on every answer: a scraper or test that reused an idle keep-alive socket
  // could send its request just as the server's keep-alive timer (5 s) closed it, and get "other
  // side closed" (nodejs/undici#3141; seen under CPU starvation). Probes and scrapes are seconds
  // apart, so a fresh connection per request costs nothing that matters.
  const reply = (response: ServerResponse, status: number, body: string, contentType = 'text/plain; charset=utf-8') => {
    response.writeHead(status, { 'content-type': contentType, 'cache-control': 'no-store', connection: 'close' });
    response.end(body);
  };
  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const path = (request.url ?? '/').split('?')[0];
    if (request.method !== 'GET' && request.method !== 'HEAD') return reply(response, 405, 'method not allowed\n');
    switch (path) {
      case '/healthz':
        return reply(response, 200, 'ok\n');
      case '/readyz': {
        const ready = options.ready ? await options.ready() : true;
        return reply(response, ready ? 200 : 503, ready ? 'ready\n' : 'not ready\n');
      }
      case '/metrics':
        return reply(response, 200, options.metrics ? await options.metrics() : '', PROMETHEUS_CONTENT_TYPE);
      default:
        return reply(response, 404, 'not found\n');
    }
  };
  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) reply(response, 500, `${errorMessage(error)}\n`);
      else response.destroy();
    });
  });
  const host = options.host ?? '0.0.0.0';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://${host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host}:${port}`,
    close: () =>
      new Promise((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}
