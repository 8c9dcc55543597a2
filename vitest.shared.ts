import { defineConfig } from 'vitest/config';

/**
 * Shared vitest settings. Workspace packages resolve to their TypeScript sources through the
 * `@lockfabric/source` export condition, so unit tests never need a prior build.
 */
export function projectTestConfig(options: { testTimeoutMs?: number; include?: string[]; isolate?: boolean } = {}) {
  const conditions = ['@lockfabric/source', 'node', 'import', 'default'];
  return defineConfig({
    resolve: { conditions },
    ssr: { resolve: { conditions, externalConditions: ['node', 'import', 'default'] } },
    test: {
      include: options.include ?? ['src/**/*.test.ts', 'tests/**/*.test.ts'],
      testTimeout: options.testTimeoutMs ?? 20_000,
      hookTimeout: 60_000,
      pool: 'forks',
      // A worker keeps its module graph from one test file to the next. With isolation each file
      // re-imported (and vite re-served) the whole workspace it uses: at load, collecting took
      // 114 s against 6 s of tests in lock-caslock, and the project's CPU fell 7.0 → 4.8 s
      // without it. A project whose tests share module state can ask for isolation back.
      isolate: options.isolate ?? false,
      // Protocol projects are scaffolded before their first test lands.
      passWithNoTests: true,
      reporters: ['default'],
    },
  });
}
