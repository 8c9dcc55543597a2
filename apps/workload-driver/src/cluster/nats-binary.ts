import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/** The nats-server binary: $NATS_SERVER_BIN, then PATH, then Debian's /usr/sbin; undefined when absent. */
export function findNatsServer(): string | undefined {
  const candidates = [process.env['NATS_SERVER_BIN'], 'nats-server', '/usr/sbin/nats-server', '/usr/bin/nats-server'].filter(
    (c): c is string => typeof c === 'string' && c.length > 0,
  );
  for (const candidate of candidates) {
    if (candidate.includes('/') && !existsSync(candidate)) continue;
    try {
      execFileSync(candidate, ['--version'], { stdio: 'ignore', timeout: 5_000 });
      return candidate;
    } catch {
      // not this one
    }
  }
  return undefined;
}
