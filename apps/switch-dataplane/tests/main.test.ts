import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const projectDir = fileURLToPath(new URL('..', import.meta.url));
const viteNode = fileURLToPath(new URL('../../../node_modules/vite-node/vite-node.mjs', import.meta.url));

/** Runs src/main.ts from source (vite-node, with the workspace's source condition). */
function runMain(args: readonly string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [viteNode, '--config', 'vitest.config.ts', 'src/main.ts', '--', ...args], { cwd: projectDir, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, stderr }));
  });
}

// Starting vite-node takes seconds on a loaded machine; the generous timeout is not what the test checks.
describe('switch-dataplane main', () => {
  it('exits with code 2 and says why when the configured program does not exist', async () => {
    // The NATS URL leads nowhere: the program check must come first.
    const { code, stderr } = await runMain(['--switch.program', 'bogus', '--nats.url', 'nats://127.0.0.1:1']);
    expect(stderr).toContain('switch.program');
    expect(stderr).toContain('bogus');
    expect(code).toBe(2);
  }, 60_000);

  it('exits with code 2 and names the setting when a program setting is bad, before it tries NATS', async () => {
    const { code, stderr } = await runMain(['--switch.program', 'fisslock', '--switch.lock-count', '2000000', '--nats.url', 'nats://127.0.0.1:1']);
    expect(stderr).toContain('switch.lockCount: at most 1680000 locks fit the switch');
    expect(code).toBe(2);
  }, 60_000);

  it('exits with code 2 when fisslock settings are given to another program', async () => {
    const { code, stderr } = await runMain(['--switch.program', 'netlock', '--switch.policy', 'write-preferring', '--nats.url', 'nats://127.0.0.1:1']);
    expect(stderr).toContain('switch.policy: applies to the fisslock program only (switch.program is netlock)');
    expect(code).toBe(2);
  }, 60_000);

  it('reads the program settings from a --config file too: a bad one exits with code 2, naming the file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lf-switch-main-'));
    try {
      const path = join(dir, 'switch.json');
      writeFileSync(path, JSON.stringify({ switch: { program: 'fisslock', policy: 'fair', lockCount: 2_000_000 } }));
      const { code, stderr } = await runMain([`--config=${path}`, '--nats.url', 'nats://127.0.0.1:1']);
      expect(stderr).toContain(`switch.policy from config file ${path}: expected one of read-preferring, starvation-prevention, write-preferring, got 'fair'`);
      expect(code).toBe(2);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
