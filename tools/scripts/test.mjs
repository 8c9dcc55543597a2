#!/usr/bin/env node
// `npm test`: build everything, then run the live end-to-end tests — the longest part, one file at
// a time because each starts a cluster of processes — from the start, beside every project's lint
// and tests and the simulation-only end-to-end tests. Under `nx run-many -t build lint test` alone
// the live suite waited for free task slots and started last, so it set the length of the run.
// Exits non-zero when any lane fails, after every lane has finished.
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const e2e = join(root, 'e2e');
process.env.NX_DAEMON ??= 'false';

/** End-to-end files that start a live cluster (separate processes); the rest run sim or embedded. */
const LIVE = (file) => file.startsWith('live-') || file === 'cli-nemesis-kube.test.ts' || file === 'clock-agreement.test.ts';
const files = readdirSync(join(e2e, 'tests')).filter((f) => f.endsWith('.test.ts')).sort();
const live = files.filter(LIVE).map((f) => `tests/${f}`);
const offline = files.filter((f) => !LIVE(f)).map((f) => `tests/${f}`);

function run(label, command, args, cwd = root) {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd, stdio: 'inherit', env: process.env });
    child.on('exit', (code, signal) => {
      const seconds = ((Date.now() - started) / 1000).toFixed(0);
      console.log(`== ${label}: ${code === 0 ? 'passed' : `FAILED (${signal ?? `exit ${code}`})`} in ${seconds} s`);
      resolve(code === 0);
    });
  });
}

async function lane(label, steps) {
  let ok = true;
  for (const [name, command, args, cwd] of steps) ok = (await run(`${label}: ${name}`, command, args, cwd)) && ok;
  return ok;
}

const nx = (...args) => ['npx', ['nx', ...args, '--outputStyle=static']];
const started = Date.now();
if (!(await run('build', ...nx('run-many', '-t', 'build')))) process.exit(1);
const results = await Promise.all([
  lane('live', [['e2e live tests', 'npx', ['vitest', 'run', ...live], e2e]]),
  lane('rest', [
    ['unit tests', ...nx('run-many', '-t', 'test', '--exclude=e2e', '--parallel=2')],
    // What every project's `lint` target checks, in one process each instead of two per project:
    // each project's own program re-checked the sources of everything it imports (the root
    // tsconfig.spec.json includes exactly the files of all the projects' tsconfig.spec.json).
    ['typecheck of every project', 'npx', ['tsc', '-p', 'tsconfig.spec.json']],
    ['eslint of every project', 'npx', ['eslint', '.']],
    ['wire contract', 'node', ['tools/scripts/generate-wire.mjs', '--check']],
    // One module graph for all of them (the driver's library is about a thousand modules); the
    // live files keep a fresh process each, since they start and stop clusters of their own.
    ['e2e sim and embedded tests', 'npx', ['vitest', 'run', '--no-isolate', ...offline], e2e],
  ]),
]);
console.log(`== npm test: ${results.every(Boolean) ? 'passed' : 'FAILED'} in ${((Date.now() - started) / 1000).toFixed(0)} s`);
process.exit(results.every(Boolean) ? 0 : 1);
