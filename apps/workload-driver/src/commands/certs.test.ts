import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '@lockfabric/ports';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { certsCommand } from './certs.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('lockfabric certs create: per-pod NATS keys', () => {
  it('lists every problem of the per-pod flags at once (exit 2 via ConfigError)', async () => {
    const run = certsCommand(['create', '--dir', '/nonexistent/x', '--compute-nodes', '2', '--compute-racks', '0,x', '--memory-id-base', '2', '--compute-switch-racks', 'all']);
    const error = await run.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).issues).toEqual([
      '--memory-id-base: needs --memory-nodes',
      '--compute-racks: expected comma-separated non-negative integers, got "0,x"',
      '--compute-switch-racks all: needs --switches (the racks are 0..switches-1)',
    ]);
    expect(await certsCommand(['create', '--dir', '/nonexistent/x', '--compute-nodes', '1', '--compute-racks', '1', '--switches', '1']).catch((e: unknown) => (e as ConfigError).issues)).toEqual([
      '--compute-racks/--compute-switch-racks: rack 1 has no switch (--switches 1 serves racks 0..0)',
    ]);
  });

  it('writes a seed per pod named after it, no role key for those roles, and grants each compute pod its rack', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lf-certs-'));
    dirs.push(dir);
    vi.spyOn(console, 'log').mockImplementation(() => undefined);
    expect(await certsCommand(['create', '--dir', dir, '--compute-nodes', '2', '--compute-racks', '0,1', '--memory-nodes', '1', '--switches', '2', '--switch-id-base', '5'])).toBe(0);
    const nats = join(dir, 'nats');
    for (const file of ['compute-node/compute-node-0.seed', 'compute-node/compute-node-1.seed', 'memory-node/memory-node-0.seed', 'switch/switch-dataplane-0.seed', 'switch/switch-dataplane-1.seed', 'coordinator/nkey.seed', 'driver/nkey.seed']) {
      expect(existsSync(join(nats, file)), file).toBe(true);
    }
    for (const role of ['compute-node', 'memory-node', 'switch']) expect(existsSync(join(nats, role, 'nkey.seed')), role).toBe(false);
    const conf = readFileSync(join(nats, 'nats.conf'), 'utf8');
    expect(conf).toMatch(/# compute-node-1 \(node 2\)\n.*\n\s+publish: \{ allow: \["lf\.\*\.hb\.compute\.2", "lf\.\*\.sw\.1\.in",/);
    expect(conf).toMatch(/# switch-dataplane-1 \(node 6\)\n.*\n.*\n\s+subscribe: \{ allow: \["lf\.\*\.sw\.1\.in",/);
    expect(conf).not.toContain('sw.*.in');
  });
});
