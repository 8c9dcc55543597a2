import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CutProxyError } from './cut-client.js';
import { startCutControl } from './cut-control.js';
import { CutRelay } from './cut-relay.js';
import { ChaosTargetError, LocalChaos } from './local-chaos.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  vi.restoreAllMocks();
});

/** A harmless stand-in process (the partition target, or the proxy's pid). */
function sleeper(): ChildProcess {
  const child = spawn('sleep', ['60'], { stdio: 'ignore' });
  cleanups.push(() => void child.kill('SIGKILL'));
  return child;
}

function clusterDir(processes: object[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'lf-partition-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'cluster.json'), JSON.stringify({ cluster: 'x', natsUrl: 'nats://127.0.0.1:1', startedAt: '', processes }));
  return dir;
}

const compute = (pid: number) => ({ name: 'compute-2', role: 'compute', node: 2, pid, log: 'l', argv: ['sleep'] });
const proxyRecord = (pid: number, control: number) => ({ name: 'cut-proxy', role: 'proxy', node: -1, pid, log: 'cut-proxy.log', health: control, argv: ['node'] });

function stateOf(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
}

describe('LocalChaos.partition', () => {
  it('asks the cut proxy to cut the target off, then heals it; the target is never signalled', async () => {
    const relay = await CutRelay.start({ routes: [] });
    const control = await startCutControl(relay);
    cleanups.push(() => relay.close(), () => control.close());
    const cut = vi.spyOn(relay, 'cut');
    const heal = vi.spyOn(relay, 'heal');
    const target = sleeper();
    const dir = clusterDir([compute(target.pid!), proxyRecord(sleeper().pid!, control.port)]);
    const outcome = await new LocalChaos(dir).partition('compute-2', 20);
    expect(outcome).toMatchObject({ verb: 'partition', target: 'compute-2', pid: target.pid });
    expect(outcome.detail).toMatch(/cut off for 20 ms by the cut proxy .* still running\), then healed/);
    expect(cut.mock.calls).toStrictEqual([['compute-2']]);
    expect(heal).toHaveBeenCalledWith('compute-2');
    expect(relay.isCut('compute-2')).toBe(false);
    expect(stateOf(target.pid!)).not.toBe('T');
  });

  it('says so when the recorded proxy is gone or does not answer', async () => {
    const target = sleeper();
    const dead = clusterDir([compute(target.pid!), proxyRecord(2 ** 22 + 19, 1)]);
    await expect(new LocalChaos(dead).partition('compute-2', 10)).rejects.toThrow(ChaosTargetError);
    await expect(new LocalChaos(dead).partition('compute-2', 10)).rejects.toThrow(/cut proxy .* is not running/);
    // Alive but deaf: a port nobody listens on.
    const relay = await CutRelay.start({ routes: [] });
    const control = await startCutControl(relay);
    const port = control.port;
    await control.close();
    await relay.close();
    const deaf = clusterDir([compute(target.pid!), proxyRecord(sleeper().pid!, port)]);
    await expect(new LocalChaos(deaf).partition('compute-2', 10)).rejects.toThrow(CutProxyError);
    await expect(new LocalChaos(deaf).partition('compute-2', 10)).rejects.toThrow(/does not answer/);
    expect(stateOf(target.pid!)).not.toBe('T');
  });

  it('falls back to SIGSTOP/SIGCONT in a cluster without the proxy, and says so', async () => {
    const target = sleeper();
    const dir = clusterDir([compute(target.pid!)]);
    const partition = new LocalChaos(dir).partition('compute-2', 1_000);
    // Stopped during the partition…
    const deadline = Date.now() + 5_000;
    while (stateOf(target.pid!) !== 'T' && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(stateOf(target.pid!)).toBe('T');
    const outcome = await partition;
    // …and running again after it.
    expect(stateOf(target.pid!)).not.toBe('T');
    expect(outcome.detail).toMatch(/no cut proxy in this cluster — start it with 'cluster up --cut-proxy' for a real cut: emulated by SIGSTOP\/SIGCONT/);
  });
});
