import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parsePrometheusText } from '@lockfabric/telemetry';
import { startOtlpReceiver } from '@lockfabric/testkit';
import type { OtlpReceiver } from '@lockfabric/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// One real memory-node process with OTEL_EXPORTER_OTLP_ENDPOINT pointing at an in-test receiver
// and an export interval far beyond the test: nothing arrives until SIGTERM, and then the final
// export on shutdown must carry the whole registry under the service's resource, matching what
// /metrics served. (Periodic exports are covered in process by libs/telemetry's tests.)

const MEMORY_NODE_MAIN = fileURLToPath(new URL('../../apps/memory-node/dist/main.js', import.meta.url));
const WAIT_MS = 60_000;

describe('live: a service exports its metrics over OTLP when configured', () => {
  let receiver: OtlpReceiver;
  let nats: ChildProcess | undefined;
  let child: ChildProcess | undefined;
  let healthPort = 0;
  const output: string[] = [];

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    nats = spawn('nats-server', ['-a', '127.0.0.1', '-p', '-1'], { stdio: ['ignore', 'pipe', 'pipe'] });
    const natsUrl = await natsListening(nats);
    child = spawn(
      process.execPath,
      [MEMORY_NODE_MAIN, '--cluster=otlp-metrics', `--nats.url=${natsUrl}`, '--node.id=0', '--health.port=0', '--memory.grpc-port=0', '--memory.lock-count=1024', '--tls.mode=insecure'],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_METRIC_EXPORT_INTERVAL: '3600000', OTEL_TRACES_EXPORTER: 'none' },
      },
    );
    child.stderr?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
    const lines = createInterface({ input: child.stdout! });
    const ready = new Promise<number>((resolve, reject) => {
      lines.on('line', (line) => {
        output.push(line);
        if (!line.startsWith('{')) return;
        const event = JSON.parse(line) as { event?: string; health?: number };
        if (event.event === 'ready' && typeof event.health === 'number') resolve(event.health);
      });
      child?.once('exit', (code) => reject(new Error(`memory-node exited (${code}) before ready:\n${output.join('\n')}`)));
    });
    healthPort = await withDeadline(ready, WAIT_MS, () => `memory-node not ready:\n${output.join('\n')}`);
  });

  afterAll(async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
    if (nats && nats.exitCode === null) {
      nats.kill('SIGTERM');
      await once(nats, 'exit');
    }
    await receiver?.close();
  });

  it('exports the registry on SIGTERM under the service resource, with the same series as /metrics', async () => {
    const scraped = parsePrometheusText(await (await fetch(`http://127.0.0.1:${healthPort}/metrics`)).text());
    expect(scraped.size).toBeGreaterThan(0);
    expect(receiver.metricRequests).toBe(0);

    child?.kill('SIGTERM');
    const [code] = (await once(child!, 'exit')) as [number | null];
    expect(code, output.join('\n')).toBe(0);
    // The final export landed before the process exited.
    expect(receiver.metricRequests).toBe(1);
    expect(receiver.rejectedRequests).toBe(0);

    const exported = new Map(receiver.metrics.map((m) => [m.name, m]));
    const first = receiver.metrics[0];
    expect(first).toMatchObject({ serviceName: 'lockfabric-memory', resource: { 'service.namespace': 'lockfabric', 'service.instance.id': 'memory-0' } });
    // Every family /metrics serves arrives with the matching kind and, the node being idle, the same values.
    const kinds: Record<string, string> = { counter: 'sum', gauge: 'gauge', histogram: 'histogram' };
    for (const family of scraped.values()) {
      // A labelled metric nobody used yet has no series, on /metrics and over OTLP alike.
      if (family.samples.length === 0) {
        expect(exported.has(family.name), family.name).toBe(false);
        continue;
      }
      const metric = exported.get(family.name);
      expect(metric?.kind, family.name).toBe(kinds[family.type]);
      if (metric?.kind !== 'sum' && metric?.kind !== 'gauge') continue;
      for (const sample of family.samples) {
        const point = metric.points.find((p) => JSON.stringify(p.attributes) === JSON.stringify(sample.labels));
        expect(point?.value, `${family.name}${JSON.stringify(sample.labels)}`).toBe(sample.value);
      }
    }
    expect(exported.get('lockfabric_memory_fenced_nodes')).toMatchObject({ kind: 'gauge', points: [{ attributes: {}, value: 0 }] });
  });
});

/** The client URL nats-server prints once it listens (it picks a free port with `-p -1`). */
function natsListening(server: ChildProcess): Promise<string> {
  const seen: string[] = [];
  const url = new Promise<string>((resolve, reject) => {
    const look = (chunk: Buffer) => {
      seen.push(chunk.toString());
      const match = /Listening for client connections on ([\d.]+:\d+)/.exec(seen.join(''));
      if (match) resolve(`nats://${match[1]}`);
    };
    server.stdout?.on('data', look);
    server.stderr?.on('data', look);
    server.once('error', reject);
    server.once('exit', (code) => reject(new Error(`nats-server exited (${code}):\n${seen.join('')}`)));
  });
  return withDeadline(url, WAIT_MS, () => `nats-server did not listen:\n${seen.join('')}`);
}

/** Bounds a wait that only a failing run reaches; it never decides a passing one. */
function withDeadline<T>(promise: Promise<T>, ms: number, describe: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(describe())), ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}
