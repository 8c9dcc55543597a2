#!/usr/bin/env node
// Copies what the runtime image needs out of a built, pruned checkout: the root manifest, the
// production node_modules (workspace links stay valid because the layout is kept), and for each
// workspace only package.json, dist/ and bin/. Sources, tests and configs stay behind.
//   node infra/docker/stage-runtime.mjs <built-checkout> <out-dir>
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const [from, to] = process.argv.slice(2);
if (!from || !to) {
  console.error('usage: stage-runtime.mjs <built-checkout> <out-dir>');
  process.exit(2);
}
const root = JSON.parse(readFileSync(join(from, 'package.json'), 'utf8'));
mkdirSync(to, { recursive: true });
for (const file of ['package.json', 'package-lock.json']) cpSync(join(from, file), join(to, file));
cpSync(join(from, 'node_modules'), join(to, 'node_modules'), { recursive: true, verbatimSymlinks: true });
cpSync(join(from, 'infra', 'docker', 'entrypoint.mjs'), join(to, 'infra', 'docker', 'entrypoint.mjs'));
cpSync(join(from, 'infra', 'docker', 'machine-id.mjs'), join(to, 'infra', 'docker', 'machine-id.mjs'));

/** Workspace folders from the root `workspaces` globs (only the `dir/*` form is used here). */
function workspaceDirs() {
  return root.workspaces.flatMap((pattern) => {
    if (!pattern.endsWith('/*')) return [pattern];
    const parent = pattern.slice(0, -2);
    const abs = join(from, parent);
    if (!existsSync(abs)) return [];
    return readdirSync(abs, { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && existsSync(join(abs, entry.name, 'package.json')))
      .map((entry) => join(parent, entry.name));
  });
}

for (const dir of workspaceDirs()) {
  for (const part of ['package.json', 'dist', 'bin']) {
    const source = join(from, dir, part);
    if (existsSync(source)) cpSync(source, join(to, dir, part), { recursive: true });
  }
}
