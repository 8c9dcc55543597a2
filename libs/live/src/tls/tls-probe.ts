import { connect as tlsConnect } from 'node:tls';
import { ConfigError } from '@lockfabric/ports';
import { processTlsOn } from './process-tls.js';

/** What a TLS ClientHello to `host:port` showed about the server. */
export type TlsProbeOutcome = 'tls' | 'plaintext' | 'closed' | 'unreachable';

/**
 * Sends a TLS ClientHello (no client certificate, server certificate not verified: only whether the
 * server speaks TLS matters). A completed handshake or a TLS alert means TLS; a non-TLS answer
 * (a plaintext HTTP/2 server sends its SETTINGS at once) means plaintext; a connection accepted
 * and then closed or reset with no answer is `closed` — what a TCP relay gives when nothing is
 * behind it; a refused connect or no answer within `timeoutMs` is left to the caller.
 */
export function probeTls(address: string, timeoutMs = 3_000): Promise<TlsProbeOutcome> {
  const at = address.lastIndexOf(':');
  const host = address.slice(0, at).replace(/^\[|\]$/g, '');
  const port = Number(address.slice(at + 1));
  return new Promise((resolve) => {
    let settled = false;
    const socket = tlsConnect({ host, port, rejectUnauthorized: false, ALPNProtocols: ['h2'], timeout: timeoutMs });
    let connected = false;
    const done = (outcome: TlsProbeOutcome) => {
      if (settled) return;
      settled = true;
      socket.destroy();
      resolve(outcome);
    };
    socket.once('connect', () => (connected = true));
    socket.once('secureConnect', () => done('tls'));
    socket.once('timeout', () => done('unreachable'));
    socket.once('error', (error: NodeJS.ErrnoException) => {
      const code = error.code ?? '';
      if (code.includes('ALERT')) done('tls');
      else if (!connected || code === 'ECONNREFUSED') done('unreachable');
      // Node reports a close before the handshake as ECONNRESET too
      else if (code === 'ECONNRESET' || code === 'EPIPE') done('closed');
      else done('plaintext');
    });
    socket.once('close', () => done(connected ? 'closed' : 'unreachable'));
  });
}

/**
 * Fails at once with a clear ConfigError when this process's transport security does not match
 * the servers': no certificate against a mutual-TLS server, or a certificate against a plaintext
 * one. Without this, gRPC keeps retrying the handshake and the command reports only "unreachable"
 * after its whole timeout. Unreachable and closed servers are left to the normal path.
 */
export async function assertTransportSecurityMatches(addresses: readonly string[], timeoutMs = 3_000): Promise<void> {
  const tlsOn = processTlsOn();
  const outcomes = await Promise.all(addresses.map(async (address) => ({ address, outcome: await probeTls(address, timeoutMs) })));
  const problems: string[] = [];
  for (const { address, outcome } of outcomes) {
    if (outcome === 'tls' && !tlsOn)
      problems.push(
        `${address} requires mutual TLS (the handshake needs a client certificate) but this command has none: set LOCKFABRIC_TLS_CA, LOCKFABRIC_TLS_CERT and LOCKFABRIC_TLS_KEY to an operator certificate of that cluster (lockfabric certs create), or run it with the --dir of the cluster that lockfabric cluster up started`,
      );
    if (outcome === 'plaintext' && tlsOn) problems.push(`${address} speaks plaintext gRPC (a cluster started with --insecure) but this command uses TLS: unset LOCKFABRIC_TLS_* to talk to it`);
  }
  if (problems.length > 0) throw new ConfigError(problems);
}
