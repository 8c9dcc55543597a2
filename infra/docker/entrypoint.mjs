#!/usr/bin/env node
// The image's entry point: `<app> [flags]` runs one LockFabric app with the flags it accepts.
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { APP_ENTRIES, applyMachineRack, machineId, machineRack } from './machine-id.mjs';

const appRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const [app, ...args] = process.argv.slice(2);
const entry = app === undefined ? undefined : APP_ENTRIES[app];
if (entry === undefined) {
  console.error(`usage: <app> [flags], app one of ${Object.keys(APP_ENTRIES).join(', ')}; got ${JSON.stringify(app ?? '')}`);
  process.exit(2);
}
try {
  const id = machineId(process.env, hostname());
  if (id !== undefined) process.env.LOCKFABRIC_NODE_ID = String(id);
  applyMachineRack(process.env, machineRack(process.env, hostname()));
} catch (error) {
  console.error(`lockfabric ${app}: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(2);
}
// The app reads its flags from process.argv.slice(2), as if started directly.
process.argv = [process.argv[0] ?? 'node', join(appRoot, entry), ...args];
await import(pathToFileURL(join(appRoot, entry)).href);
