import { defineConfig } from 'vitest/config';

// Same settings as the shared config (workspace packages from their sources), kept inline here.
const conditions = ['@lockfabric/source', 'node', 'import', 'default'];
export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions, externalConditions: ['node', 'import', 'default'] } },
  test: { include: ['src/**/*.test.ts', 'tests/**/*.test.ts'], testTimeout: 20_000, pool: 'forks' },
});
