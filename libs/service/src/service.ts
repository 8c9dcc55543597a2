import { ConfigError, errorMessage } from '@lockfabric/ports';
import { formatConfig, loadConfig } from '@lockfabric/config';
import type { Config, NodeRole } from '@lockfabric/config';
import { configureProcessNats, configureProcessTls, connectNats, processNatsViolations, resolveNatsCa, resolveNkeySeed, consoleLogger, createSubjects, loadTlsMaterial, processPeerGuard, startHealthServer, startHeartbeat, tlsFilesIn } from '@lockfabric/live';
import type { HeartbeatPublisher, Logger, Subjects } from '@lockfabric/live';
import { RealClock } from '@lockfabric/realtime';
import { MetricsRegistry, createPrometheusMetrics, initMetricsExport, initTelemetry } from '@lockfabric/telemetry';
import type { MetricsExport, Telemetry } from '@lockfabric/telemetry';
import type { NatsConnection } from '@nats-io/transport-node';

/**
 * What a service's start function receives: validated config and the shared plumbing. `nc` is a
 * connection for services that need NATS (runService exits when it cannot connect), else maybe none.
 */
export interface ServiceContext<Nats extends NatsConnection | undefined = NatsConnection | undefined> {
  readonly role: NodeRole;
  readonly config: Config;
  readonly logger: Logger;
  readonly clock: RealClock;
  readonly telemetry: Telemetry;
  readonly metrics: MetricsRegistry;
  readonly nc: Nats;
  readonly subjects: Subjects;
}

/** A started service: its readiness, what it listens on, and how it drains. */
export interface RunningService {
  ready(): boolean;
  /** Ports and addresses for the start line and `lockfabric cluster status`. */
  readonly endpoints: Readonly<Record<string, string | number>>;
  /** Refreshes gauges right before a scrape. */
  collectMetrics?(): void;
  close(): Promise<void>;
}

interface ServiceOptionsBase {
  readonly role: NodeRole;
  readonly argv?: readonly string[];
  readonly env?: NodeJS.ProcessEnv;
}

/** Services that only serve gRPC (a memory node) still heartbeat over NATS when it is reachable. */
export type ServiceOptions =
  | (ServiceOptionsBase & { readonly needsNats: true; readonly start: (context: ServiceContext<NatsConnection>) => Promise<RunningService> })
  | (ServiceOptionsBase & { readonly needsNats: false; readonly start: (context: ServiceContext) => Promise<RunningService> });

/**
 * The life of every LockFabric service process: validate config (exit 2 on a ConfigError), print
 * it, connect, start, serve health and metrics, heartbeat, and drain on SIGTERM/SIGINT.
 */
export async function runService(options: ServiceOptions): Promise<void> {
  const env = options.env ?? process.env;
  let config: Config;
  try {
    config = loadConfig({ role: options.role, argv: [...(options.argv ?? process.argv.slice(2))], env });
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`lockfabric ${options.role}: ${error.message}`);
      process.exit(2);
    }
    throw error;
  }
  const name = `${options.role}-${config.node.id}`;
  const logger = prefixed(consoleLogger, name);
  logger.info(`starting with configuration:\n${formatConfig(config)}`);
  setUpTls(options.role, config, logger);
  const natsSeed = natsCredentials(options.role, config, logger);

  const clock = new RealClock();
  const serviceName = `lockfabric-${options.role}`;
  const telemetry = initTelemetry({ serviceName, serviceInstanceId: name, env, ...(config.trace.ratio !== undefined ? { ratio: config.trace.ratio } : {}), slowMs: config.trace.slowMs });
  const metrics = new MetricsRegistry();
  // Started before the service so a bad OTEL_* setting stops the process before it binds anything.
  const started: { service?: RunningService } = {};
  const collectRefusals = refusalMetric(metrics);
  const collectViolations = natsViolationMetric(metrics);
  const collect = () => {
    collectRefusals();
    collectViolations();
    started.service?.collectMetrics?.();
  };
  const metricsExport = startMetricsExport(options.role, metrics, serviceName, name, env, collect, logger);
  const subjects = createSubjects(config.cluster);
  const connect = () => connectNats({ servers: config.nats.url.split(','), name, logger, ...(natsSeed ? { nkeySeed: natsSeed } : {}) });
  const base = { role: options.role, config, logger, clock, telemetry, metrics, subjects };
  let nc: NatsConnection | undefined;
  let service: RunningService;
  if (options.needsNats) {
    const connected = await connect().catch((error: unknown) => {
      logger.error(`cannot reach NATS at ${config.nats.url}: ${describe(error)}`);
      return process.exit(1);
    });
    nc = connected;
    service = await options.start({ ...base, nc: connected });
  } else {
    nc = await connect().catch((error: unknown) => {
      logger.warn(`NATS at ${config.nats.url} unreachable (${describe(error)}); serving without heartbeats`);
      return undefined;
    });
    service = await options.start({ ...base, nc });
  }
  started.service = service;
  const prometheus = createPrometheusMetrics({ registry: metrics, collect });
  const health = await startHealthServer({
    port: config.health.port,
    ready: () => service.ready(),
    metrics: () => prometheus.render(),
  });
  let heartbeat: HeartbeatPublisher | undefined;
  if (nc) {
    heartbeat = startHeartbeat({
      nc,
      subjects,
      role: options.role,
      id: String(config.node.id),
      node: config.node.id,
      incarnation: Date.now(),
      intervalMs: config.coordinator.heartbeatIntervalMs,
      ready: () => service.ready(),
      logger,
    });
  }
  // One machine-readable line so launchers learn the ports a service actually bound.
  console.log(JSON.stringify({ event: 'ready', role: options.role, node: config.node.id, pid: process.pid, health: health.port, ...service.endpoints }));

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info(`${signal}: draining`);
    const force = setTimeout(() => {
      logger.error('drain took longer than 10 s; exiting');
      process.exit(1);
    }, 10_000);
    force.unref();
    heartbeat?.stop();
    await service.close().catch((error: unknown) => logger.error(`close failed: ${describe(error)}`));
    await health.close().catch(() => undefined);
    await prometheus.shutdown().catch(() => undefined);
    await nc?.drain().catch(() => undefined);
    // The final metrics export runs after the service closed, so it carries the last counts.
    await Promise.all([telemetry.shutdown().catch(() => undefined), metricsExport.shutdown().catch(() => undefined)]);
    logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

/**
 * OTLP export of the service's registry when the environment asks for it (OTEL_METRICS_EXPORTER,
 * OTEL_EXPORTER_OTLP_[METRICS_]ENDPOINT); a bad setting stops the service like any ConfigError.
 * Failures are logged on the first in a row and every tenth after, so a missing collector does not
 * flood the log.
 */
function startMetricsExport(
  role: NodeRole,
  metrics: MetricsRegistry,
  serviceName: string,
  instanceId: string,
  env: NodeJS.ProcessEnv,
  collect: () => void,
  logger: Logger,
): MetricsExport {
  let metricsExport: MetricsExport;
  try {
    metricsExport = initMetricsExport({
      registry: metrics,
      serviceName,
      serviceInstanceId: instanceId,
      env,
      collect,
      onExportError: (error, consecutiveFailures) => {
        if (consecutiveFailures === 1 || consecutiveFailures % 10 === 0) logger.warn(`${error.message} (${consecutiveFailures} in a row; dropped)`);
      },
    });
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`lockfabric ${role}: ${error.message}`);
      process.exit(2);
    }
    throw error;
  }
  if (metricsExport.enabled) logger.info('exporting metrics over OTLP');
  return metricsExport;
}

/**
 * Sets the process's gRPC credentials from `tls.*` once, before any server binds: unreadable
 * files stop the service with exit 2 like any configuration problem; insecure mode is allowed
 * but said loudly, since every gRPC peer is then anonymous.
 */
function setUpTls(role: NodeRole, config: Config, logger: Logger): void {
  if (config.tls.mode === 'insecure') {
    logger.warn('TLS IS OFF (tls.mode=insecure): gRPC traffic is plaintext and any peer may call any method');
    configureProcessTls(undefined, logger);
    return;
  }
  const defaults = tlsFilesIn(config.tls.dir);
  const files = { ca: config.tls.ca ?? defaults.ca, cert: config.tls.cert ?? defaults.cert, key: config.tls.key ?? defaults.key };
  try {
    configureProcessTls(loadTlsMaterial(files), logger);
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`lockfabric ${role}: ${error.message}`);
      process.exit(2);
    }
    throw error;
  }
  logger.info(`mutual TLS on gRPC with ${files.cert}`);
}

/** This service's NATS NKey seed (nats.seedFile or the standard file); a bad file exits 2. */
function natsCredentials(role: NodeRole, config: Config, logger: Logger): string | undefined {
  try {
    const { seed, from } = resolveNkeySeed(config.nats.seedFile);
    if (seed === undefined) logger.warn('NATS WITHOUT CREDENTIALS: no nats.seedFile and no standard seed file; a server that requires authentication will refuse this service');
    else logger.info(`NATS identity from ${from}`);
    const tls = resolveNatsCa(config.nats.caFile);
    if (tls.ca === undefined) logger.warn('NATS WITHOUT TLS: no nats.caFile and no standard CA file; NATS traffic is plaintext');
    else logger.info(`NATS over TLS, server verified against ${tls.from}`);
    configureProcessNats(seed, tls.ca);
    return seed;
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`lockfabric ${role}: ${error.message}`);
      process.exit(2);
    }
    throw error;
  }
}

/** `lockfabric_nats_permission_violations_total`: publishes and subscriptions the NATS server refused this identity. */
function natsViolationMetric(metrics: MetricsRegistry): () => void {
  const refused = metrics.counter({ name: 'lockfabric_nats_permission_violations_total', help: 'NATS publishes and subscriptions refused by the server under this identity', labelNames: [] });
  let seen = 0;
  return () => {
    const now = processNatsViolations().count();
    refused.inc({}, now - seen);
    seen = now;
  };
}

/** `lockfabric_grpc_refused_total{reason}`: calls the peer guard refused (bad, missing or wrong-role certificate). */
function refusalMetric(metrics: MetricsRegistry): () => void {
  const refused = metrics.counter({ name: 'lockfabric_grpc_refused_total', help: 'gRPC calls refused by the peer guard, by reason', labelNames: ['reason'] });
  const seen = new Map<string, number>();
  return () => {
    for (const [reason, count] of Object.entries(processPeerGuard().refusedByReason())) {
      refused.inc({ reason }, count - (seen.get(reason) ?? 0));
      seen.set(reason, count);
    }
  };
}

export function prefixed(logger: Logger, prefix: string): Logger {
  return {
    info: (message) => logger.info(`[${prefix}] ${message}`),
    warn: (message) => logger.warn(`[${prefix}] ${message}`),
    error: (message) => logger.error(`[${prefix}] ${message}`),
  };
}

export function describe(error: unknown): string {
  return errorMessage(error);
}
