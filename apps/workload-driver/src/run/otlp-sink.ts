import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A minimal OTLP/HTTP endpoint for `bench --trace-ratio`: it answers every export with success and
 * counts requests and bytes without decoding them. The services pay the real cost of recording and
 * exporting spans, while no Jaeger competes with them for this machine's cores.
 */
export interface OtlpSink {
  readonly endpoint: string;
  counts(): { readonly requests: number; readonly bytes: number };
  close(): Promise<void>;
}

export async function startOtlpSink(): Promise<OtlpSink> {
  let requests = 0;
  let bytes = 0;
  const server = createServer((request, response) => {
    request.on('data', (chunk: Buffer) => (bytes += chunk.length));
    request.on('end', () => {
      requests++;
      response.writeHead(200, { 'content-type': 'application/x-protobuf' });
      response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}/v1/traces`,
    counts: () => ({ requests, bytes }),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** What `--trace-ratio` asked for: tracing off, or head sampling at a ratio in (0, 1]. */
export type TraceSetting = { readonly off: true } | { readonly off: false; readonly ratio: number };

/** `off` or a ratio in (0, 1] (`1%` and `0.01` alike); undefined with the problem otherwise. */
export function parseTraceSetting(raw: string): TraceSetting | string {
  if (raw === 'off' || raw === '0') return { off: true };
  const percent = raw.endsWith('%');
  const value = Number(percent ? raw.slice(0, -1) : raw) / (percent ? 100 : 1);
  if (!Number.isFinite(value) || value <= 0 || value > 1) return `--trace-ratio: expected off, a ratio in (0, 1] or a percentage (1%), got ${JSON.stringify(raw)}`;
  return { off: false, ratio: value };
}

/** The services' environment for a setting: spans to `endpoint` at the ratio, or no exporter at all. */
export function traceEnvironment(setting: TraceSetting, endpoint: string): Record<string, string> {
  if (setting.off) return { OTEL_TRACES_EXPORTER: 'none' };
  // The traces endpoint only, so metrics export stays as it was; spans leave every half second, so
  // a short bench's spans are exported before its cluster stops.
  return { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: endpoint, LOCKFABRIC_TRACE_RATIO: String(setting.ratio), OTEL_BSP_SCHEDULE_DELAY: '500' };
}
