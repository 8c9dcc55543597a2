import type { TlsFiles } from '@lockfabric/live';

/** How long nats-server waits for a client's TLS handshake, in seconds (its default, 0.5 s, is short on a loaded host). */
const HANDSHAKE_TIMEOUT_S = 5;

/**
 * nats-server `tls {}` block: the server presents `cert`, and every client connection
 * must be TLS. Clients verify the server against the cluster CA; they authenticate with their NKey,
 * not a client certificate, so the server does not ask for one (`ca_file` lets it verify one if a
 * later config adds `verify: true`).
 */
export function natsServerTlsBlock(files: TlsFiles): string {
  return [
    'tls {',
    `  cert_file: ${JSON.stringify(files.cert)}`,
    `  key_file: ${JSON.stringify(files.key)}`,
    `  ca_file: ${JSON.stringify(files.ca)}`,
    `  timeout: ${HANDSHAKE_TIMEOUT_S}`,
    '}',
    '',
  ].join('\n');
}
