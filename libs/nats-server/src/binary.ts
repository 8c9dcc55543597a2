import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { NatsServerNotFoundError } from './errors.js';

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Absolute path of the nats-server to run: `binary` when given, else $NATS_SERVER_BIN, Debian's
 * /usr/sbin, then `nats-server` on PATH. Throws {@link NatsServerNotFoundError} naming where it looked.
 */
export function findNatsServer(binary?: string, env: NodeJS.ProcessEnv = process.env): string {
  const fromEnv = env['NATS_SERVER_BIN'];
  const candidates = binary ? [binary] : [...(fromEnv ? [fromEnv] : []), '/usr/sbin/nats-server', ...(env['PATH'] ?? '').split(delimiter).filter(Boolean).map((dir) => join(dir, 'nats-server'))];
  const found = candidates.find(isExecutable);
  if (found) return found;
  throw new NatsServerNotFoundError(binary ? [binary] : [...(fromEnv ? [fromEnv] : []), '/usr/sbin/nats-server', '`nats-server` on PATH']);
}

/** Like {@link findNatsServer}, but undefined when there is none (to decide whether live runs are possible). */
export function locateNatsServer(env: NodeJS.ProcessEnv = process.env): string | undefined {
  try {
    return findNatsServer(undefined, env);
  } catch {
    return undefined;
  }
}
