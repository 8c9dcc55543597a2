import { createServer } from 'node:net';
import { TestServerError } from './test-server-error.js';

/**
 * A TCP port that was free a moment ago: the OS picks it for a throwaway listener. Another process
 * can still take it before the caller binds, so servers that accept port 0 should prefer that.
 */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      if (address === null || typeof address === 'string') {
        server.close();
        reject(new TestServerError(`could not read the port of a listener on ${host}`));
        return;
      }
      server.close(() => resolve(address.port));
    });
  });
}
