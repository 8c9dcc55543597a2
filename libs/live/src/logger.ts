import type { Logger } from '@lockfabric/control';

/** Where the live transport reports what operators need to see (the control plane's Logger port). */
export type { Logger };

function line(level: string, message: string): string {
  return `${new Date().toISOString()} ${level} ${message}`;
}

/** One line per event on stderr, so stdout stays free for a command's output. */
export const consoleLogger: Logger = {
  info: (message) => console.error(line('INFO', message)),
  warn: (message) => console.error(line('WARN', message)),
  error: (message) => console.error(line('ERROR', message)),
};

export const silentLogger: Logger = { info() {}, warn() {}, error() {} };
