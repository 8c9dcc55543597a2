import { existsSync, readFileSync } from 'node:fs';
import { connect, nkeyAuthenticator, nkeys, PermissionViolationError, type NatsConnection, type Status } from '@nats-io/transport-node';
import { ConfigError } from '@lockfabric/ports';
import { consoleLogger, type Logger } from './logger.js';
import { errorMessage } from '@lockfabric/ports';

/** Where a service looks for its NATS NKey seed when `nats.seedFile` is not set. */
export const STANDARD_NATS_SEED_FILE = '/etc/lockfabric/nats/nkey.seed';

/** Where a service looks for the CA that signed the NATS server's certificate when `nats.caFile` is not set. */
export const STANDARD_NATS_CA_FILE = '/etc/lockfabric/nats/ca.crt';

/**
 * The NKey seed in `path`, checked: a missing, unreadable or malformed file is a ConfigError (the
 * service exits 2 naming the file), never a connection that silently carries no credentials.
 */
export function readNkeySeed(path: string): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError([`nats.seedFile: cannot read ${path}: ${errorMessage(error)}`]);
  }
  const seed = text.trim();
  const notHeld = (why: string) => new ConfigError([`nats.seedFile: ${path} does not hold an NKey user seed: ${why}`]);
  // Only user seeds (SU…): the server config lists users, and another kind would never authenticate.
  if (!seed.startsWith('SU')) throw notHeld('not a user seed (SU…)');
  try {
    nkeys.fromSeed(new TextEncoder().encode(seed));
  } catch (error) {
    throw notHeld(errorMessage(error));
  }
  return seed;
}

/** The seed a service connects with: `nats.seedFile`, else the standard file when present, else none. */
export function resolveNkeySeed(seedFile: string | undefined, standard: string = STANDARD_NATS_SEED_FILE): { seed?: string; from?: string } {
  const path = seedFile ?? (existsSync(standard) ? standard : undefined);
  return path === undefined ? {} : { seed: readNkeySeed(path), from: path };
}

/**
 * The PEM CA bundle in `path` that NATS server certificates must chain to. Checked here, so a
 * wrong path is a ConfigError (exit 2 naming the file) rather than a TLS failure on every reconnect.
 */
export function readNatsCa(path: string): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError([`nats.caFile: cannot read ${path}: ${errorMessage(error)}`]);
  }
  if (!text.includes('-----BEGIN CERTIFICATE-----')) throw new ConfigError([`nats.caFile: ${path} holds no PEM certificate`]);
  return text;
}

/** The CA a service verifies NATS with: `nats.caFile`, else the standard file when present, else none (plaintext). */
export function resolveNatsCa(caFile: string | undefined, standard: string = STANDARD_NATS_CA_FILE): { ca?: string; from?: string } {
  const path = caFile ?? (existsSync(standard) ? standard : undefined);
  return path === undefined ? {} : { ca: readNatsCa(path), from: path };
}

let processNkeySeed: string | undefined;
let processNatsCa: string | undefined;

/**
 * The NATS identity every connection of this process uses unless told otherwise: set once by a
 * service from its config, or by the CLI from the cluster it addresses (like the gRPC certificate).
 * With `ca`, every connection requires TLS and verifies the server against that CA.
 */
export function configureProcessNats(seed: string | undefined, ca?: string): void {
  processNkeySeed = seed;
  processNatsCa = ca;
}

/** True when this process's NATS connections require TLS (a CA is configured). */
export function processNatsTlsOn(): boolean {
  return processNatsCa !== undefined;
}

/** TLS `connect()` options: the server must offer TLS with a certificate from `ca` (PEM); or none. */
export function natsTlsOptions(ca: string | undefined = processNatsCa): { tls?: { ca: string } } {
  return ca === undefined ? {} : { tls: { ca } };
}

/** `connect()` options that present the process's (or the given) NKey and require TLS when a CA is set. */
export function natsAuthOptions(
  seed: string | undefined = processNkeySeed,
  ca: string | undefined = processNatsCa,
): { authenticator?: ReturnType<typeof nkeyAuthenticator>; tls?: { ca: string } } {
  return { ...(seed === undefined ? {} : { authenticator: nkeyAuthenticator(new TextEncoder().encode(seed)) }), ...natsTlsOptions(ca) };
}

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
  /** NKey seed (`SU…`) of this connection's NATS identity; default: the process's (configureProcessNats). */
  readonly nkeySeed?: string;
  /** PEM CA the server's certificate must chain to (TLS required); default: the process's. */
  readonly caPem?: string;
  /** Counts and logs what the server refused; default: the process-wide one. */
  readonly violations?: NatsPermissionViolations;
}

/**
 * Publishes or subscriptions the server refused under this identity's permissions. The
 * server answers a refused publish with an asynchronous -ERR and keeps the connection, so the
 * service keeps serving; each refusal is counted, and logged at most once per subject per interval
 * (a bug that publishes in a loop must not fill the disk).
 */
export class NatsPermissionViolations {
  private readonly bySubject = new Map<string, { count: number; loggedAtMs: number }>();
  private total = 0;

  constructor(
    private readonly intervalMs = 10_000,
    private readonly nowMs: () => number = () => performance.now(),
  ) {}

  /** Counts `error` if it is a permission violation; true when it was one. */
  record(name: string, error: unknown, logger: Logger): boolean {
    if (!(error instanceof PermissionViolationError)) return false;
    this.total++;
    const key = `${error.operation} ${error.subject}`;
    const entry = this.bySubject.get(key) ?? { count: 0, loggedAtMs: Number.NEGATIVE_INFINITY };
    entry.count++;
    const now = this.nowMs();
    if (now - entry.loggedAtMs >= this.intervalMs) {
      logger.warn(`nats ${name}: the server refused ${key} (permissions violation; ${entry.count} so far for this subject)`);
      entry.loggedAtMs = now;
    }
    this.bySubject.set(key, entry);
    return true;
  }

  /** Refusals so far, in total. */
  count(): number {
    return this.total;
  }

  /** Refusals so far by `publish <subject>` / `subscription <subject>`. */
  bySubjects(): Record<string, number> {
    return Object.fromEntries([...this.bySubject].map(([key, v]) => [key, v.count]));
  }
}

const processViolations = new NatsPermissionViolations();

/** The violations counted for every connection of this process that was not given its own counter. */
export function processNatsViolations(): NatsPermissionViolations {
  return processViolations;
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
    ...natsAuthOptions(options.nkeySeed ?? processNkeySeed, options.caPem ?? processNatsCa),
  });
  logger.info(`nats ${options.name}: connected to ${nc.getServer()}${(options.caPem ?? processNatsCa) === undefined ? '' : ' over TLS'}`);
  void watchStatus(nc, options.name, logger, options.violations ?? processViolations);
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

async function watchStatus(nc: NatsConnection, name: string, logger: Logger, violations: NatsPermissionViolations): Promise<void> {
  try {
    for await (const status of nc.status()) {
      if (status.type === 'error' && violations.record(name, status.error, logger)) continue;
      const line = describeNatsStatus(name, status);
      if (line) logger[line.level](line.message);
    }
  } catch (error) {
    logger.warn(`nats ${name}: status watcher stopped: ${errorMessage(error)}`);
  }
}
