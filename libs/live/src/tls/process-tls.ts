import { Server } from '@grpc/grpc-js';
import type { ChannelCredentials, ChannelOptions, ServerCredentials, ServerOptions } from '@grpc/grpc-js';
import { RealClock } from '@lockfabric/realtime';
import { consoleLogger } from '../logger.js';
import type { Logger } from '../logger.js';
import { channelCredentialsFor, serverCredentialsFor } from './credentials.js';
import type { TlsMaterial } from './credentials.js';
import { PeerGuard } from './peer-guard.js';
import type { MethodRule } from './access-policy.js';

/**
 * A process has one identity, so its gRPC servers and clients share one TLS setting: a service
 * sets it from its config at start (libs/service), the CLI from the cluster it talks to. The
 * credentials are built here once; every channel and server reuses them (nothing per call).
 * Unset, the process is insecure: library tests and in-process substrates need no certificates.
 */
interface ProcessTls {
  readonly material: TlsMaterial | undefined;
  readonly channel: ChannelCredentials;
  readonly server: ServerCredentials;
  readonly guard: PeerGuard;
}

let current: ProcessTls = build(undefined, consoleLogger);

function build(material: TlsMaterial | undefined, logger: Logger): ProcessTls {
  return {
    material,
    channel: channelCredentialsFor(material),
    server: serverCredentialsFor(material),
    guard: new PeerGuard({ tlsOn: material !== undefined, logger, clock: new RealClock() }),
  };
}

/** Sets this process's certificates (undefined = insecure) and the logger refusals and audit lines go to. */
export function configureProcessTls(material: TlsMaterial | undefined, logger: Logger = consoleLogger): void {
  current = build(material, logger);
}

export function processTlsOn(): boolean {
  return current.material !== undefined;
}

/** Credentials for a client channel to a LockFabric server. */
export function clientCredentials(): ChannelCredentials {
  return current.channel;
}

/**
 * The name a TLS client sends as SNI. grpc-js would send the dialled host, usually an IP, which RFC
 * 6066 forbids (Node warns DEP0123 on every connection); host names are not what we check anyway —
 * the peer's identity is the SAN URI the cluster CA signed (decision record 0007).
 */
export const TLS_SERVER_NAME = 'lockfabric';

/** Channel options for a client to a LockFabric server, `extra` included: with TLS on, the SNI name above. */
export function clientChannelOptions(extra: ChannelOptions = {}): ChannelOptions {
  return tlsChannelOptions(current.material !== undefined, extra);
}

export function tlsChannelOptions(tlsOn: boolean, extra: ChannelOptions = {}): ChannelOptions {
  return tlsOn ? { ...extra, 'grpc.ssl_target_name_override': TLS_SERVER_NAME } : extra;
}

/** The guard of this process's servers: refusal counts and audit lines. */
export function processPeerGuard(): PeerGuard {
  return current.guard;
}

/** A gRPC server whose every call passes the peer guard (under `policy`, default ACCESS_POLICY), and the credentials to bind it with. */
export function guardedServer(options: ServerOptions = {}, policy?: Readonly<Record<string, MethodRule>>): { server: Server; credentials: ServerCredentials } {
  const tls = current;
  const guard = policy ? tls.guard.interceptorFor(policy) : tls.guard.interceptor;
  return { server: new Server({ ...options, interceptors: [...(options.interceptors ?? []), guard] }), credentials: tls.server };
}
