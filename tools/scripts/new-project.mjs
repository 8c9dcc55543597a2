#!/usr/bin/env node
// Scaffolds one workspace project with the repository's conventions:
//   node tools/scripts/new-project.mjs <dir> <npm-name> <type-tag> [dep ...]
// e.g. node tools/scripts/new-project.mjs libs/locks/caslock @lockfabric/lock-caslock protocol @lockfabric/ports
import { mkdirSync, writeFileSync, existsSync } from 'node:fs';
import { join, relative } from 'node:path';

const [dir, name, type, ...deps] = process.argv.slice(2);
if (!dir || !name || !type) {
  console.error('usage: new-project.mjs <dir> <npm-name> <type-tag> [workspace-dep ...]');
  process.exit(2);
}
const root = process.cwd();
const abs = join(root, dir);
const up = relative(abs, root) || '.';
const projectName = name.replace(/^@lockfabric\//, '');
const isApp = type === 'app';
mkdirSync(join(abs, 'src'), { recursive: true });

const write = (file, content) => {
  const path = join(abs, file);
  if (existsSync(path)) return;
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content, null, 2) + '\n');
};

const depDirs = deps.map((d) => d); // resolved by npm workspaces
write('package.json', {
  name,
  version: '0.1.0',
  private: true,
  type: 'module',
  exports: {
    '.': { '@lockfabric/source': './src/index.ts', types: './dist/index.d.ts', default: './dist/index.js' },
  },
  dependencies: Object.fromEntries(depDirs.map((d) => [d, '*'])),
});
write('project.json', {
  name: projectName,
  $schema: `${up}/node_modules/nx/schemas/project-schema.json`,
  sourceRoot: `${dir}/src`,
  projectType: isApp ? 'application' : 'library',
  tags: [`type:${type}`],
  targets: {
    build: { command: 'tsc -p tsconfig.json', options: { cwd: '{projectRoot}' } },
    lint: { command: `tsc -p tsconfig.spec.json && eslint .`, options: { cwd: '{projectRoot}' } },
    test: { command: 'vitest run', options: { cwd: '{projectRoot}' } },
  },
});
write('tsconfig.json', {
  extends: `${up}/tsconfig.base.json`,
  compilerOptions: { composite: true, rootDir: 'src', outDir: 'dist', tsBuildInfoFile: 'dist/.tsbuildinfo' },
  include: ['src/**/*.ts'],
  exclude: ['src/**/*.test.ts'],
  references: [],
});
write('tsconfig.spec.json', {
  extends: `${up}/tsconfig.base.json`,
  compilerOptions: { noEmit: true, customConditions: ['@lockfabric/source'] },
  include: ['src/**/*.ts', 'tests/**/*.ts', 'vitest.config.ts'],
});
write('vitest.config.ts', `import { projectTestConfig } from '${up}/vitest.shared.js';\n\nexport default projectTestConfig();\n`);
write('src/index.ts', `export {};\n`);
console.log(`created ${dir} (${name}, type:${type})`);
