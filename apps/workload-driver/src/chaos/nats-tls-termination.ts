import { TLSSocket, checkServerIdentity, connect as tlsConnect, createSecureContext } from 'node:tls';
import type { SecureContext } from 'node:tls';
import type { Socket } from 'node:net';
import { LockFabricError } from '@lockfabric/ports';

/**
 * How the cut proxy carries NATS over TLS and still reads its frames (a partial partition drops
 * chosen deliveries): it ends the client's TLS with its own certificate from the cluster CA and
 * opens a second TLS connection to nats-server, verified against the same CA. Clients see a
 * server whose certificate the cluster CA signed, as without the proxy.
 */
export interface NatsTlsTermination {
  /** The certificate and key the proxy presents to clients (PEM). */
  readonly cert: string | Buffer;
  readonly key: string | Buffer;
  /** The cluster CA: nats-server's certificate must chain to it (PEM). */
  readonly ca: string | Buffer;
}

/** The two TLS legs of one relayed connection, carrying clear NATS protocol bytes. */
export interface NatsTlsEnds {
  /** Towards the client (the proxy is the TLS server). */
  readonly client: TLSSocket;
  /** Towards nats-server (the proxy is the TLS client). */
  readonly server: TLSSocket;
}

/** The longest INFO line accepted from nats-server before TLS starts. */
const MAX_INFO_BYTES = 64 * 1024;
/** How long the proxy waits for INFO and for each handshake (a loaded host can be slow). */
const HANDSHAKE_TIMEOUT_MS = 10_000;

/** The proxy could not put TLS on a relayed NATS connection (the caller closes both sockets). */
export class NatsTlsTerminationError extends LockFabricError {
  readonly code = 'NATS_TLS_TERMINATION';
}

const contexts = new WeakMap<NatsTlsTermination, SecureContext>();

function serverContext(t: NatsTlsTermination): SecureContext {
  let context = contexts.get(t);
  if (!context) {
    context = createSecureContext({ cert: t.cert, key: t.key });
    contexts.set(t, context);
  }
  return context;
}

/**
 * NATS starts in clear text: the server sends one `INFO {…}` line saying `tls_required`, then the
 * client starts TLS on the same connection. So the proxy reads that line from nats-server, upgrades
 * its own connection to TLS, passes the line on to the client and then accepts the client's TLS
 * handshake. Rejects (the caller closes both sockets) when the server does not ask for TLS, the
 * line is too long, a handshake fails or anything takes longer than the timeout.
 */
export async function upgradeNatsTls(client: Socket, server: Socket, serverHost: string, t: NatsTlsTermination): Promise<NatsTlsEnds> {
  const info = await readInfoLine(server);
  if (!/"tls_required"\s*:\s*true/.test(info.toString('utf8'))) throw new NatsTlsTerminationError('nats-server does not require TLS, but the proxy was told to carry NATS over TLS');
  const upstream = tlsConnect({ socket: server, ca: t.ca, checkServerIdentity: (_name, cert) => checkServerIdentity(serverHost, cert) });
  await handshake(upstream, 'secureConnect', 'nats-server');
  upstream.setNoDelay(true);
  // The client waits for INFO before it sends anything, so no byte of its handshake can be missed.
  client.write(info);
  const downstream = new TLSSocket(client, { isServer: true, secureContext: serverContext(t) });
  await handshake(downstream, 'secure', 'client');
  return { client: downstream, server: upstream };
}

/** The first CRLF-terminated line the server sends, with its CRLF. */
function readInfoLine(server: Socket): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    let seen = Buffer.alloc(0);
    const timer = setTimeout(() => finish(new NatsTlsTerminationError('no INFO from nats-server in time')), HANDSHAKE_TIMEOUT_MS);
    const onData = (chunk: Buffer) => {
      seen = Buffer.concat([seen, chunk]);
      const end = seen.indexOf('\r\n');
      if (end >= 0) {
        // The server sends nothing after INFO until the client's TLS handshake.
        if (end + 2 !== seen.length) return finish(new NatsTlsTerminationError('nats-server sent more than INFO before TLS'));
        return finish(undefined, seen);
      }
      if (seen.length > MAX_INFO_BYTES) finish(new NatsTlsTerminationError(`INFO from nats-server exceeds ${MAX_INFO_BYTES} bytes`));
    };
    const onEnd = () => finish(new NatsTlsTerminationError('nats-server closed before INFO'));
    const finish = (error: Error | undefined, line?: Buffer) => {
      clearTimeout(timer);
      server.off('data', onData);
      server.off('end', onEnd);
      server.off('error', onEnd);
      server.pause();
      if (error) reject(error);
      else resolve(line as Buffer);
    };
    server.on('data', onData);
    server.on('end', onEnd);
    server.on('error', onEnd);
    server.resume();
  });
}

function handshake(socket: TLSSocket, event: 'secure' | 'secureConnect', peer: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => done(new NatsTlsTerminationError(`TLS handshake with ${peer} did not finish in time`)), HANDSHAKE_TIMEOUT_MS);
    const onError = (error: Error) => done(new NatsTlsTerminationError(`TLS handshake with ${peer} failed: ${error.message}`));
    const onClose = () => done(new NatsTlsTerminationError(`${peer} closed during the TLS handshake`));
    const onReady = () => done(undefined);
    const done = (error: Error | undefined) => {
      clearTimeout(timer);
      socket.off(event, onReady);
      socket.off('error', onError);
      socket.off('close', onClose);
      if (error) {
        socket.destroy();
        reject(error);
      } else resolve();
    };
    socket.once(event, onReady);
    socket.once('error', onError);
    socket.once('close', onClose);
  });
}
