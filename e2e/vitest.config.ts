import { defineConfig } from 'vitest/config';

// Live tests spawn real processes (nats-server and the services' built entry points), so they run
// one file at a time and import the driver's built library rather than sources.
export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks',
    fileParallelism: false,
  },
});
