import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NotBuiltError } from './errors.js';

/** The repository root, found from this file whether it runs from src/ (tests) or dist/. */
export function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 8; i++) {
    if (existsSync(join(dir, 'nx.json'))) return dir;
    dir = resolve(dir, '..');
  }
  throw new NotBuiltError('cannot find the LockFabric repository root (nx.json) above ' + fileURLToPath(import.meta.url));
}

export type ServiceApp = 'memory-node' | 'compute-node' | 'switch-dataplane' | 'coordinator';

/** The built entry point of a service; a clear error when the build is missing. */
export function serviceEntry(app: ServiceApp): string {
  const entry = join(repoRoot(), 'apps', app, 'dist', 'main.js');
  if (!existsSync(entry)) throw new NotBuiltError(`${app} is not built (${entry} is missing): run \`npm run build\` first`);
  return entry;
}

/** A built file of this app (the cut proxy's entry point); a clear error when the build is missing. */
export function driverEntry(file: string): string {
  const entry = join(repoRoot(), 'apps', 'workload-driver', 'dist', file);
  if (!existsSync(entry)) throw new NotBuiltError(`the workload driver is not built (${entry} is missing): run \`npm run build\` first`);
  return entry;
}
