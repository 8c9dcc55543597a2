import { defineConfig } from 'vitest/config';

/**
 * Shared vitest settings. Workspace packages resolve to their TypeScript sources through the
 * `@lockfabric/source` export condition, so unit tests never need a prior build.
 */
export function projectTestConfig(options: { testTimeoutMs?: number; include?: string[] } = {}) {
  const conditions = ['@lockfabric/source', 'node', 'import', 'default'];
  return defineConfig({
    resolve: { conditions },
    ssr: { resolve: { conditions, externalConditions: ['node', 'import', 'default'] } },
    test: {
      include: options.include ?? ['src/**/*.test.ts', 'tests/**/*.test.ts'],
      testTimeout: options.testTimeoutMs ?? 20_000,
      hookTimeout: 60_000,
      pool: 'forks',
      // Protocol projects are scaffolded before their first test lands.
      passWithNoTests: true,
      reporters: ['default'],
    },
  });
}
