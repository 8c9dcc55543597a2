import { connect, nkeyAuthenticator, type NatsConnection, type Status } from '@nats-io/transport-node';
import { consoleLogger, type Logger } from './logger.js';
import { errorMessage } from '@lockfabric/ports';

export interface NatsConnectOptions {
  /** `nats://host:port`, or several for a cluster. */
  readonly servers: string | readonly string[];
  /** Shown by the server's monitoring pages: the service and instance. */
  readonly name: string;
  readonly logger?: Logger;
  /** Base wait between reconnect attempts. */
  readonly reconnectTimeWaitMs?: number;
  /** Random extra wait per attempt, so a restarted server is not hit by every client at once. */
  readonly reconnectJitterMs?: number;
  /** Keep retrying the first connect too (a pod may start before NATS). Default true. */
  readonly waitOnFirstConnect?: boolean;
  /** Timeout of one connection attempt. */
  readonly connectTimeoutMs?: number;
  /** NKey seed (`SU…`) of this service's NATS identity, when the server requires authentication. */
  readonly nkeySeed?: string;
}

/**
 * A NATS connection for a long-running service: reconnects forever with jitter, and logs every
 * status change that matters to an operator (not pings or per-attempt noise).
 */
export async function connectNats(options: NatsConnectOptions): Promise<NatsConnection> {
  const logger = options.logger ?? consoleLogger;
  const servers = typeof options.servers === 'string' ? options.servers : [...options.servers];
  const nc = await connect({
    servers,
    name: options.name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: options.reconnectTimeWaitMs ?? 250,
    reconnectJitter: options.reconnectJitterMs ?? 100,
    waitOnFirstConnect: options.waitOnFirstConnect ?? true,
    timeout: options.connectTimeoutMs ?? 2_000,
    ...(options.nkeySeed === undefined ? {} : { authenticator: nkeyAuthenticator(new TextEncoder().encode(options.nkeySeed)) }),
  });
  logger.info(`nats ${options.name}: connected to ${nc.getServer()}`);
  void watchStatus(nc, options.name, logger);
  return nc;
}

/** The log line for a status change, or undefined for the ones not worth a line. */
export function describeNatsStatus(name: string, status: Status): { level: 'info' | 'warn'; message: string } | undefined {
  switch (status.type) {
    case 'disconnect':
      return { level: 'warn', message: `nats ${name}: disconnected from ${status.server}, reconnecting` };
    case 'reconnect':
      return { level: 'info', message: `nats ${name}: reconnected to ${status.server}` };
    case 'ldm':
      return { level: 'warn', message: `nats ${name}: server ${status.server} entered lame-duck mode` };
    case 'error':
      return { level: 'warn', message: `nats ${name}: ${status.error.message}` };
    case 'staleConnection':
      return { level: 'warn', message: `nats ${name}: connection went stale` };
    case 'slowConsumer':
      return { level: 'warn', message: `nats ${name}: slow consumer on ${status.sub.getSubject()} (${status.pending} pending)` };
    case 'close':
      return { level: 'info', message: `nats ${name}: connection closed` };
    default:
      return undefined;
  }
}

async function watchStatus(nc: NatsConnection, name: string, logger: Logger): Promise<void> {
  try {
    for await (const status of nc.status()) {
      const line = describeNatsStatus(name, status);
      if (line) logger[line.level](line.message);
    }
  } catch (error) {
    logger.warn(`nats ${name}: status watcher stopped: ${errorMessage(error)}`);
  }
}
