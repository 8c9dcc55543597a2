import { ESLint } from 'eslint';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// Lints planted files (text only, never written) under the repository's own eslint.config.mjs: a
// bare `throw new Error(…)` in production source must fail lint, a typed error must pass, and tests
// stay free to throw plain errors.
const root = fileURLToPath(new URL('../../../', import.meta.url));
const RULE = 'no-restricted-syntax';

async function bareThrows(eslint: ESLint, file: string, text: string): Promise<string[]> {
  const [result] = await eslint.lintText(text, { filePath: `${root}${file}` });
  return (result?.messages ?? []).filter((m) => m.ruleId === RULE).map((m) => m.message);
}

describe('no bare Error thrown in production source (lint)', () => {
  it('rejects a planted bare throw in apps, libs and tools; allows typed errors and tests', async () => {
    const eslint = new ESLint({ cwd: root });
    const planted = "export function planted(x: number): number {\n  if (x < 0) throw new Error('negative');\n  return x;\n}\n";
    for (const file of ['apps/workload-driver/src/cluster/planted.ts', 'libs/live/src/planted.ts', 'libs/locks/dslr/src/planted.ts', 'tools/bench/planted.ts']) {
      const found = await bareThrows(eslint, file, planted);
      expect(found, file).toHaveLength(1);
      expect(found[0]).toContain('LockFabricError');
    }
    // without `new` too
    expect(await bareThrows(eslint, 'libs/harness/src/planted.ts', "export function planted(): never {\n  throw Error('x');\n}\n")).toHaveLength(1);
    const typed = "import { ConfigError } from '@lockfabric/ports';\nexport function planted(x: number): number {\n  if (x < 0) throw new ConfigError(['x: negative']);\n  return x;\n}\n";
    expect(await bareThrows(eslint, 'libs/live/src/planted.ts', typed)).toEqual([]);
    expect(await bareThrows(eslint, 'libs/live/tests/planted.test.ts', planted)).toEqual([]);
    expect(await bareThrows(eslint, 'apps/workload-driver/src/cluster/planted.test.ts', planted)).toEqual([]);
  }, 180_000);

  it('rejects a plain Error as a promise rejection or an abort reason; allows typed ones', async () => {
    const eslint = new ESLint({ cwd: root });
    // planted mutants: the shapes the last plain errors had (a gRPC callback, a wrapped throw, an abort)
    const plain = [
      "export const planted = new Promise<void>((resolve, reject) => setTimeout(() => reject(new Error('late')), 1));\n",
      "export const planted = (error: unknown): Promise<never> => Promise.reject(error instanceof Error ? error : new Error(String(error)));\n",
      "export function planted(stop: AbortController): void {\n  stop.abort(new Error('node 2 failed'));\n}\n",
    ];
    for (const text of plain) {
      const found = await bareThrows(eslint, 'libs/run-host/src/planted.ts', text);
      expect(found, text).toHaveLength(1);
      expect(found[0]).toContain('LockFabricError');
    }
    // app source too, where the protocol-name selector shares the rule
    expect(await bareThrows(eslint, 'apps/coordinator/src/planted.ts', plain[0] as string)).toHaveLength(1);
    const typed = "import { RunAbortedError } from '@lockfabric/ports';\nexport function planted(stop: AbortController): void {\n  stop.abort(new RunAbortedError('node 2 failed'));\n}\n";
    expect(await bareThrows(eslint, 'libs/run-host/src/planted.ts', typed)).toEqual([]);
    expect(await bareThrows(eslint, 'libs/run-host/tests/planted.test.ts', plain[2] as string)).toEqual([]);
  }, 180_000);
});
