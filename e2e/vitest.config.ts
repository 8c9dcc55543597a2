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
    // The workspace packages are symlinks to libs/*/dist and apps/*/dist, outside node_modules once
    // resolved, so vitest would transform and evaluate their ~1 000 modules itself in every fresh
    // test process. Node loads built code as it is: about 6 s of import per live file less.
    server: { deps: { external: [/\/(libs|apps)\/.+\/dist\//] } },
  },
});
