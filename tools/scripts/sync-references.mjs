#!/usr/bin/env node
// Keeps each project's tsconfig.json `references` equal to its workspace dependencies, so
// `tsc -b` builds libraries in dependency order. `--check` fails instead of writing.
import { readFileSync, writeFileSync, readdirSync, existsSync, statSync } from 'node:fs';
import { join, relative, dirname } from 'node:path';

const root = process.cwd();
const check = process.argv.includes('--check');
const projects = [];
const walk = (dir, depth) => {
  if (depth > 3) return;
  for (const entry of readdirSync(dir)) {
    if (entry === 'node_modules' || entry.startsWith('.') || entry === 'dist') continue;
    const full = join(dir, entry);
    if (!statSync(full).isDirectory()) continue;
    if (existsSync(join(full, 'project.json')) && existsSync(join(full, 'package.json'))) projects.push(full);
    walk(full, depth + 1);
  }
};
for (const top of ['libs', 'apps', 'e2e', 'tools']) if (existsSync(join(root, top))) walk(join(root, top), 0);
if (existsSync(join(root, 'e2e', 'project.json'))) projects.push(join(root, 'e2e'));

const byName = new Map();
for (const dir of projects) byName.set(JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).name, dir);

let stale = 0;
for (const dir of projects) {
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  const tsconfigPath = join(dir, 'tsconfig.json');
  if (!existsSync(tsconfigPath)) continue;
  const tsconfig = JSON.parse(readFileSync(tsconfigPath, 'utf8'));
  const deps = Object.keys({ ...pkg.dependencies, ...pkg.devDependencies }).filter((d) => byName.has(d));
  const refs = deps.sort().map((d) => ({ path: relative(dir, byName.get(d)) }));
  if (JSON.stringify(tsconfig.references ?? []) !== JSON.stringify(refs)) {
    stale++;
    if (check) console.error(`stale references in ${relative(root, tsconfigPath)}`);
    else {
      tsconfig.references = refs;
      writeFileSync(tsconfigPath, JSON.stringify(tsconfig, null, 2) + '\n');
    }
  }
}
if (check && stale) process.exit(1);
console.log(`${projects.length} projects, ${stale} ${check ? 'stale' : 'updated'}`);
void dirname;
