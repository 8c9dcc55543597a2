import { connect } from 'node:net';

/** What a nats-server answered a client that speaks the protocol without TLS. */
export interface PlaintextProbe {
  /** The server's INFO said it requires TLS. */
  readonly tlsRequired: boolean;
  /**
   * Its answer to the plaintext CONNECT + PING: `PONG` (accepted), `-ERR <text>` (it read the
   * plaintext protocol and refused, e.g. for missing credentials) or `closed` (it hung up without
   * reading it: a TLS-only server takes the CONNECT for a bad TLS record).
   */
  readonly answer: string;
}

/**
 * Connects to nats-server at host:port over plain TCP, reads its INFO, sends a plaintext CONNECT
 * and PING, and reports what came back. Resolves on the server's answer or when it closes.
 */
export function probePlaintextNats(host: string, port: number): Promise<PlaintextProbe> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port });
    let text = '';
    let sent = false;
    let settled = false;
    const finish = () => {
      if (settled) return;
      settled = true;
      socket.destroy();
      const info = /^INFO (\{.*\}) *\r\n/.exec(text);
      const tlsRequired = info ? (JSON.parse(info[1] as string) as { tls_required?: boolean }).tls_required === true : false;
      const error = /(-ERR [^\r]*)\r\n/.exec(text)?.[1];
      resolve({ tlsRequired, answer: error ?? (text.includes('PONG\r\n') ? 'PONG' : 'closed') });
    };
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
      if (!sent && text.includes('\r\n')) {
        sent = true;
        socket.write('CONNECT {"verbose":false,"pedantic":false,"lang":"probe","version":"0"}\r\nPING\r\n');
      }
      if (text.includes('PONG\r\n') || text.includes('-ERR')) finish();
    });
    socket.on('close', finish);
    socket.on('error', (error) => (settled ? undefined : text ? finish() : reject(error)));
  });
}
