import { isAlive, readClusterState } from '../cluster/local-cluster.js';
import { DEFAULT_CLUSTER_DIR } from '../commands/context.js';
import { parseTraceSetting, startOtlpSink, traceEnvironment } from './otlp-sink.js';
import type { TraceSetting } from './otlp-sink.js';

/** How a live bench was traced (`--trace-ratio`), and what its services exported. */
export interface TracingReport {
  /** Head-sampling ratio; 0 when tracing was off. Slow and failed acquires are kept at any ratio. */
  readonly ratio: number;
  /** `sink`: the CLI's counting OTLP endpoint; `otlp`: $OTEL_EXPORTER_OTLP_ENDPOINT; `none`: off. */
  readonly exporter: 'sink' | 'otlp' | 'none';
  /** Sink only: OTLP export requests and bytes the services sent during the run. */
  readonly exportRequests?: number;
  readonly exportBytes?: number;
}

/**
 * `--trace-ratio R[,R…]`: tracing is fixed when a service starts, so the flag needs the temporary
 * cluster a live bench starts itself — one per setting, so `off,1%` sets each protocol's floor with
 * tracing off beside the same floor at 1 % sampling. Problems go to `problems` (exit 2 with the
 * others); undefined when the flag is absent.
 */
export function readTraceSettings(values: Readonly<Record<string, unknown>>, substrate: string, problems: string[]): TraceSetting[] | undefined {
  const raw = values['trace-ratio'];
  if (typeof raw !== 'string') return undefined;
  const settings: TraceSetting[] = [];
  for (const part of raw.split(',').map((p) => p.trim())) {
    const setting = parseTraceSetting(part);
    if (typeof setting === 'string') problems.push(setting);
    else if (settings.some((s) => traceRatioOf(s) === traceRatioOf(setting))) problems.push(`--trace-ratio: ${JSON.stringify(part)} is given twice`);
    else settings.push(setting);
  }
  if (substrate !== 'live') problems.push('--trace-ratio: tracing is a live figure (give --substrate live)');
  if (values['compute-nodes-at'] !== undefined) problems.push('--trace-ratio: a cluster given by --compute-nodes-at has its tracing set already');
  const dir = typeof values['cluster-dir'] === 'string' ? values['cluster-dir'] : DEFAULT_CLUSTER_DIR;
  const running = readClusterState(dir);
  if (running?.processes.some((p) => isAlive(p.pid))) {
    problems.push(`--trace-ratio: the running cluster in ${dir} has its tracing set already; stop it (cluster down) so bench starts its own, or start it with OTEL_EXPORTER_OTLP_ENDPOINT and LOCKFABRIC_TRACE_RATIO (docs/operations.md)`);
  }
  return settings;
}

/** The head-sampling ratio of a setting: 0 when tracing is off. */
export function traceRatioOf(setting: TraceSetting): number {
  return setting.off ? 0 : setting.ratio;
}

/**
 * Acquires the live cluster with the tracing environment of `setting` (nothing when unset). Unless
 * the user's environment names an OTLP endpoint, spans go to a counting sink in this process,
 * closed with the cluster; `tracing()` reads its counts once the cluster has stopped (the services
 * flush their spans when they stop).
 */
export async function acquireTracedCluster<C extends { release(): Promise<void> }>(
  setting: TraceSetting | undefined,
  acquire: (env: Record<string, string> | undefined) => Promise<C>,
): Promise<C & { tracing?: () => TracingReport }> {
  if (setting === undefined) return acquire(undefined);
  const ratio = setting.off ? 0 : setting.ratio;
  const userEndpoint = process.env['OTEL_EXPORTER_OTLP_ENDPOINT'] ?? process.env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'];
  if (setting.off || userEndpoint !== undefined) {
    const env = setting.off ? traceEnvironment(setting, '') : { LOCKFABRIC_TRACE_RATIO: String(ratio) };
    const cluster = await acquire(env);
    return Object.assign(cluster, { tracing: (): TracingReport => ({ ratio, exporter: setting.off ? 'none' : 'otlp' }) });
  }
  const sink = await startOtlpSink();
  let cluster: C;
  try {
    cluster = await acquire(traceEnvironment(setting, sink.endpoint));
  } catch (error) {
    await sink.close();
    throw error;
  }
  const release = cluster.release.bind(cluster);
  return Object.assign(cluster, {
    release: async () => {
      try {
        await release();
      } finally {
        await sink.close();
      }
    },
    tracing: (): TracingReport => {
      const { requests, bytes } = sink.counts();
      return { ratio, exporter: 'sink', exportRequests: requests, exportBytes: bytes };
    },
  });
}
