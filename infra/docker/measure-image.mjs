#!/usr/bin/env node
// Estimates the runtime image's size without a Docker engine: it rebuilds, in a temp dir, the file
// set the Dockerfile's runtime stage copies — production node_modules as `npm prune --omit=dev`
// leaves them (every package-lock entry not marked dev, copied from this checkout's install) plus
// each workspace's package.json, dist/ and bin/ via stage-runtime.mjs — and adds the base image's
// published size. The real figure is `docker image ls lockfabric:dev` after `docker build`.
//   node infra/docker/measure-image.mjs [--json <file>] [--keep]
// Build first (npx nx run-many -t build): dist/ folders are measured as they are.
import { cpSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Base image of the Dockerfile (ARG NODE_IMAGE) and its uncompressed size as `docker image ls`
 * reports it. No engine here to pull it: 220 MB is the published figure for the Node 22 slim
 * (Debian bookworm) image in labs.iximiuz.com's "How to choose a Node.js container image"; the
 * Node 20 slim image has the same make-up (Debian slim + one Node binary). Check with
 * `docker image ls node:20.20-bookworm-slim`.
 */
export const BASE_IMAGE = 'node:20.20-bookworm-slim';
export const BASE_IMAGE_APPROX_BYTES = 220e6;

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const args = process.argv.slice(2);
const jsonOut = args.includes('--json') ? args[args.indexOf('--json') + 1] : undefined;
const keep = args.includes('--keep');

const tmp = mkdtempSync(join(tmpdir(), 'lockfabric-image-'));
const src = join(tmp, 'src');
const out = join(tmp, 'out');
try {
  mkdirSync(src, { recursive: true });
  for (const file of ['package.json', 'package-lock.json']) cpSync(join(root, file), join(src, file));
  const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8'));
  let skippedMissing = 0;
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (!path.includes('node_modules/') || entry.dev === true) continue;
    const target = join(src, path);
    mkdirSync(dirname(target), { recursive: true });
    if (entry.link === true) {
      // Workspace packages are links into the checkout, as npm installs them.
      symlinkSync(relative(dirname(target), join(src, entry.resolved)), target);
      continue;
    }
    const from = join(root, path);
    // Optional packages for other platforms are in the lock but not installed: npm skips them too.
    if (!existsSync(from)) {
      skippedMissing++;
      continue;
    }
    const nested = join(from, 'node_modules');
    cpSync(from, target, { recursive: true, verbatimSymlinks: true, filter: (p) => p !== nested && !p.startsWith(`${nested}/`) });
  }
  for (const file of ['entrypoint.mjs', 'machine-id.mjs']) cpSync(join(root, 'infra', 'docker', file), join(src, 'infra', 'docker', file));
  for (const pattern of JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).workspaces) {
    const dirs = pattern.endsWith('/*')
      ? readdirSync(join(root, pattern.slice(0, -2)), { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => join(pattern.slice(0, -2), d.name))
      : [pattern];
    for (const dir of dirs) {
      for (const part of ['package.json', 'dist', 'bin']) {
        const from = join(root, dir, part);
        if (existsSync(from)) cpSync(from, join(src, dir, part), { recursive: true });
      }
    }
  }
  const staged = spawnSync(process.execPath, [join(root, 'infra', 'docker', 'stage-runtime.mjs'), src, out], { stdio: 'inherit' });
  if (staged.status !== 0) throw new Error(`stage-runtime.mjs exited with ${staged.status}`);

  const nodeModules = sizeOf(join(out, 'node_modules'));
  const total = sizeOf(out);
  const packages = topPackages(join(out, 'node_modules'));
  const result = {
    measuredAt: new Date().toISOString(),
    method: 'runtime-stage file set rebuilt from package-lock (non-dev entries) and built dist/ folders; apparent file sizes',
    appBytes: total,
    nodeModulesBytes: nodeModules,
    workspaceBytes: total - nodeModules,
    largestPackages: packages.slice(0, 8),
    baseImage: BASE_IMAGE,
    baseImageApproxBytes: BASE_IMAGE_APPROX_BYTES,
    estimatedImageBytes: total + BASE_IMAGE_APPROX_BYTES,
    optionalPackagesNotInstalled: skippedMissing,
    note: 'the real size needs a Docker engine: docker build -f infra/docker/Dockerfile -t lockfabric:dev . && docker image ls lockfabric:dev',
  };
  const mb = (bytes) => `${(bytes / 1e6).toFixed(1)} MB`;
  console.log(`runtime stage /app: ${mb(total)} (node_modules ${mb(nodeModules)}, workspaces ${mb(total - nodeModules)})`);
  console.log(`largest packages: ${packages.slice(0, 8).map((p) => `${p.name} ${mb(p.bytes)}`).join(', ')}`);
  console.log(`base ${BASE_IMAGE}: ~${mb(BASE_IMAGE_APPROX_BYTES)} (published figure, not measured here)`);
  console.log(`estimated image: ~${mb(result.estimatedImageBytes)}; the real number: docker image ls lockfabric:dev`);
  if (jsonOut) writeFileSync(jsonOut, `${JSON.stringify(result, null, 2)}\n`);
} finally {
  if (keep) console.log(`kept ${tmp}`);
  else rmSync(tmp, { recursive: true, force: true });
}

/** Apparent size of every regular file below `path` (a symlink counts as its own small entry). */
function sizeOf(path) {
  const stat = lstatSync(path);
  if (!stat.isDirectory()) return stat.size;
  return readdirSync(path).reduce((sum, name) => sum + sizeOf(join(path, name)), 0);
}

/** Top-level packages of a node_modules folder (scoped ones by scope/name), largest first. */
function topPackages(nodeModules) {
  const names = readdirSync(nodeModules).flatMap((name) => (name.startsWith('@') ? readdirSync(join(nodeModules, name)).map((n) => `${name}/${n}`) : name.startsWith('.') ? [] : [name]));
  return names
    .filter((name) => !lstatSync(join(nodeModules, name)).isSymbolicLink())
    .map((name) => ({ name, bytes: sizeOf(join(nodeModules, name)) }))
    .sort((a, b) => b.bytes - a.bytes);
}
