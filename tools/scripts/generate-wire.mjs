#!/usr/bin/env node
// Lints proto/ and regenerates libs/wire/src/gen from it (DESIGN §4: the protos are the single
// source of truth; generated files are committed).
//   node tools/scripts/generate-wire.mjs           lint, then generate in place
//   node tools/scripts/generate-wire.mjs --check   lint, generate into a temp dir, and exit 1 naming
//                                                  every file where the committed output differs
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const template = 'proto/buf.gen.yaml';
const genDir = 'libs/wire/src/gen';
const check = process.argv.includes('--check');
const buf = join(root, 'node_modules', '.bin', process.platform === 'win32' ? 'buf.cmd' : 'buf');

class GenerateError extends Error {}

function run(args) {
  if (!existsSync(buf)) throw new GenerateError(`buf not found at ${relative(root, buf)}; run npm install at the repository root`);
  const result = spawnSync(buf, args, { cwd: root, stdio: 'inherit' });
  if (result.error) throw new GenerateError(`could not run buf ${args.join(' ')}: ${result.error.message}`);
  if (result.status !== 0) throw new GenerateError(`buf ${args.join(' ')} failed with exit code ${result.status}`);
}

/** Relative paths of every file under `dir`, sorted; empty when `dir` does not exist. */
function listFiles(dir) {
  if (!existsSync(dir)) return [];
  const files = [];
  const walk = (current) => {
    for (const entry of readdirSync(current)) {
      const full = join(current, entry);
      if (statSync(full).isDirectory()) walk(full);
      else files.push(relative(dir, full));
    }
  };
  walk(dir);
  return files.sort();
}

/** Files that differ between two trees: changed, missing from `actual`, or extra in it. */
function diffTrees(expectedDir, actualDir) {
  const expected = new Set(listFiles(expectedDir));
  const actual = new Set(listFiles(actualDir));
  const problems = [];
  for (const file of expected) {
    if (!actual.has(file)) problems.push(`missing: ${file}`);
    else if (!readFileSync(join(expectedDir, file)).equals(readFileSync(join(actualDir, file)))) problems.push(`differs: ${file}`);
  }
  for (const file of actual) if (!expected.has(file)) problems.push(`stale: ${file}`);
  return problems;
}

function main() {
  run(['lint', 'proto']);
  if (!check) {
    run(['generate', '--template', template]);
    console.log(`generate-wire: ${listFiles(join(root, genDir)).length} files in ${genDir}`);
    return 0;
  }
  const scratch = mkdtempSync(join(tmpdir(), 'lockfabric-wire-'));
  try {
    // `-o` prefixes the template's `out`, so the fresh copy lands at <scratch>/libs/wire/src/gen.
    run(['generate', '--template', template, '-o', scratch]);
    const problems = diffTrees(join(scratch, genDir), join(root, genDir));
    if (problems.length === 0) {
      console.log(`generate-wire: ${genDir} is up to date`);
      return 0;
    }
    console.error(`generate-wire: ${genDir} is out of date with proto/; run \`npm run generate\`:`);
    for (const problem of problems) console.error(`  ${problem}`);
    return 1;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

try {
  process.exitCode = main();
} catch (error) {
  if (!(error instanceof GenerateError)) throw error;
  console.error(`generate-wire: ${error.message}`);
  process.exitCode = 1;
}
