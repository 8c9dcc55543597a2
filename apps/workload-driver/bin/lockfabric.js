#!/usr/bin/env node
// The `lockfabric` command. The compiled program lives in ../dist; this shim exists before the
// first build so npm can link the bin, and says what to do when the build is missing.
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

const main = fileURLToPath(new URL('../dist/main.js', import.meta.url));
if (!existsSync(main)) {
  console.error('lockfabric is not built yet: run `npm run build` in the repository root (npm ci does it for you).');
  process.exit(3);
}
await import(pathToFileURL(main).href);
