import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { create } from '@bufbuild/protobuf';
import { Server, ServerCredentials } from '@grpc/grpc-js';
import { MalformedInputCounter, rawMethodOf, unaryHandler } from '@lockfabric/live';
import type { Logger } from '@lockfabric/live';
import { ConfigError } from '@lockfabric/ports';
import { Switch } from '@lockfabric/switch';
import { fissLockDecider } from '@lockfabric/lock-catalog';
import { DescribeSwitchResponseSchema, RegisterArrayDescriptorSchema, SwitchControlService } from '@lockfabric/wire';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { switchCommand } from './switch.js';
import type { SwitchSummary } from './switch.js';

const quiet: Logger = { info: () => undefined, warn: () => undefined, error: () => undefined };
let server: Server;
let port: number;
let sw: Switch;
let dir: string;

/**
 * A SwitchControl server in process that answers Describe from the switch model, as the
 * switch-dataplane does (apps may not import apps; the service's own Describe of a 1 M-lock
 * fisslock switch is tested in apps/switch-dataplane/tests/fisslock-describe.test.ts).
 */
beforeAll(async () => {
  const program = fissLockDecider({ lockCount: 1_000_000, policy: 'write-preferring' });
  sw = new Switch(program);
  server = new Server();
  server.addService(
    { describe: rawMethodOf(SwitchControlService.method.describe) },
    {
      describe: unaryHandler(SwitchControlService.method.describe, { malformed: new MalformedInputCounter({ logger: quiet }) }, () => {
        const d = sw.describe();
        return create(DescribeSwitchResponseSchema, {
          program: d.program,
          rack: 3,
          arrays: d.arrays.map((a) => create(RegisterArrayDescriptorSchema, { name: a.name, widthBits: a.width, length: a.length, stage: a.stage, sizeBits: BigInt(a.bits) })),
          registerBytes: BigInt(d.registerBytes),
          stages: d.stages.length,
          lockCount: BigInt(program.lockCount()),
          lockCapacity: BigInt(program.capacity()),
          policy: program.policy,
        });
      }),
    },
  );
  port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))));
  dir = mkdtempSync(join(tmpdir(), 'lf-switch-cmd-'));
});

afterAll(() => {
  server?.forceShutdown();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function printed(argv: string[]): Promise<{ code: number; out: string }> {
  const lines: string[] = [];
  const log = vi.spyOn(console, 'log').mockImplementation((line: string) => void lines.push(line));
  try {
    return { code: await switchCommand(argv), out: lines.join('\n') };
  } finally {
    log.mockRestore();
  }
}

async function problems(argv: string[]): Promise<readonly string[]> {
  try {
    await printed(argv);
  } catch (error) {
    if (error instanceof ConfigError) return error.issues;
    throw error;
  }
  throw new Error(`accepted ${argv.join(' ')}`);
}

describe('lockfabric switch describe', () => {
  it('prints program, capacity and register bytes of a running switch as JSON', async () => {
    const { code, out } = await printed(['describe', '--switch-at', `127.0.0.1:${port}`, '--json']);
    expect(code).toBe(0);
    const summary = JSON.parse(out) as SwitchSummary;
    expect(summary).toMatchObject({ program: 'fisslock', policy: 'write-preferring', rack: 3, lockCount: 1_000_000, lockCapacity: 1_680_000, stages: 12, admission: { open: false, epoch: 0 } });
    expect(summary.registerBytes).toBe(sw.describe().registerBytes);
    // the write-preferring decider's writer-waiting bit makes 19 bits per lock (the paper's
    // read-preferring layout, 18 bits, is the one bounded by 2.3 MB: see the switch-dataplane tests)
    expect(summary.registerBytes).toBe((1_000_000 * 19) / 8 + 1024);
    expect(summary.arrays.map((a) => a.name)).toContain('fisslock.pref');
  });

  it('prints a human report, finding the switch in a local cluster\'s state file', async () => {
    writeFileSync(join(dir, 'cluster.json'), JSON.stringify({ cluster: 'c', natsUrl: 'nats://127.0.0.1:1', processes: [{ name: 'switch-4', role: 'switch', pid: 1, grpc: port, argv: [], log: 'x' }] }));
    const { code, out } = await printed(['describe', '--dir', dir]);
    expect(code).toBe(0);
    expect(out).toContain(`switch 127.0.0.1:${port} (rack 3): program fisslock (write-preferring)`);
    expect(out).toContain('locks in registers   1000000 of a capacity of 1680000');
    expect(out).toContain(`register memory      ${sw.describe().registerBytes} bytes (2.38 MB)`);
    expect(out).toMatch(/fisslock\.free\s+5\s+1\s+1,000,000\s+1,000,000/);
  });

  it('rejects bad arguments, listing every problem, and prints help', async () => {
    expect(await problems(['explain', '--switch-at', 'nowhere', '--timeout-ms', '0'])).toStrictEqual([
      '--timeout-ms: expected an integer ≥ 1, got "0"',
      'lockfabric switch: unknown action "explain" (describe)',
      '--switch-at: expected host:port, got "nowhere"',
    ]);
    expect((await problems(['describe', '--dir', join(dir, 'none')]))[0]).toContain('no switch: give --switch-at or start a local cluster');
    expect((await printed(['--help'])).code).toBe(0);
    expect((await printed([])).code).toBe(2);
  });

  it('fails with the gRPC error when nothing answers', async () => {
    await expect(printed(['describe', '--switch-at', '127.0.0.1:1', '--timeout-ms', '2000'])).rejects.toThrow(/SwitchControlService.Describe at 127.0.0.1:1/);
  });
});
