import { defineConfig } from 'vitest/config';
import { projectTestConfig } from '../../vitest.shared.js';

// The OpenTelemetry packages publish a bundler-only ESM build (extensionless imports) under the
// `module` condition and main field; Node must load their CommonJS `main` instead.
const shared = projectTestConfig();
const conditions = ['@lockfabric/source', 'node', 'import', 'default'];

export default defineConfig({
  ...shared,
  resolve: { ...shared.resolve, conditions, mainFields: ['main'] },
  ssr: { ...shared.ssr, resolve: { ...shared.ssr?.resolve, conditions } },
});
