#!/usr/bin/env node
// Long fuzz run of every decoder of untrusted input: the same properties CI runs a few hundred
// times each, with more runs and a chosen seed. Usage: npm run fuzz -- [--runs N] [--seed S]
// Prints runs per decoder; a failure prints the decoder, its seed, the replay path and the shrunk input.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const PROJECTS = ['libs/wire', 'libs/control', 'libs/locks/fisslock/control', 'libs/workloads', 'libs/config', 'apps/compute-node'];
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

function parse(argv) {
  const out = { runs: 10_000, seed: Date.now() % 2 ** 31 };
  const problems = [];
  for (let i = 0; i < argv.length; i += 2) {
    const [flag, value] = [argv[i], argv[i + 1]];
    const n = Number(value);
    if ((flag === '--runs' || flag === '--seed') && value !== undefined && Number.isSafeInteger(n) && n >= (flag === '--runs' ? 1 : 0)) out[flag.slice(2)] = n;
    else problems.push(`${flag} ${value ?? ''}: expected --runs <positive integer> or --seed <non-negative integer>`);
  }
  if (problems.length > 0) {
    process.stderr.write(`fuzz: ${problems.join('\n  ')}\n`);
    process.exit(2);
  }
  return out;
}

const { runs, seed } = parse(process.argv.slice(2));
process.stdout.write(`fuzz: ${runs} runs per decoder, seed ${seed}\n`);
let failed = 0;
for (const project of PROJECTS) {
  const result = spawnSync('npx', ['vitest', 'run', 'fuzz', '-t', 'under fuzzing', '--testTimeout', '0'], {
    cwd: join(root, project),
    env: { ...process.env, FUZZ_RUNS: String(runs), FUZZ_SEED: String(seed), FUZZ_REPORT: '1' },
    encoding: 'utf8',
  });
  const output = `${result.stdout}${result.stderr}`;
  for (const line of output.split('\n')) if (line.startsWith('fuzz ') || line.includes('FuzzFailure:')) process.stdout.write(`${project}: ${line.trim()}\n`);
  if (result.status !== 0) {
    failed += 1;
    process.stdout.write(`${project}: FAILED (exit ${result.status})\n`);
  }
}
process.exit(failed === 0 ? 0 : 1);
