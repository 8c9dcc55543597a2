import type { LockClient } from '@lockfabric/ports';
import type { ProtocolOptions } from '@lockfabric/locks-common';
import { netlock, netlockProgram } from '../src/index.js';
import type { NetLockProgram, NetLockProgramOptions } from '../src/index.js';
import { createSwitchNet, severablePorts } from '@lockfabric/harness';
import { describe, expect, it } from 'vitest';

// Scripted: two readers share hot lock 5 (queued in the switch), a writer waits behind
// them, and the reader that is NOT at the head of the queue releases first. Then the reader on
// node 3 dies and the coordinator's purge runs. The old release popped the queue head whoever
// sent it, so the entries of the run no longer named their holders and the purge undid the wrong one.
const NODES = [1, 2, 3];
const DEAD = 3;
const MS = 1_000_000;

interface Script {
  /** Which reader queues first (is the head of the run). */
  readonly head: 'dead' | 'survivor';
  /** Which reader releases first, before the kill (none: the survivor releases after the purge). */
  readonly releasesFirst: 'dead' | 'survivor' | 'none';
  /** Node 3 was only paused: it resumes after the purge and releases its (purged) hold. */
  readonly resumes?: boolean;
}

async function play(script: Script, program: NetLockProgramOptions = {}, protocolOptions?: ProtocolOptions): Promise<string[]> {
  const switchProgram: NetLockProgram = netlockProgram({ allocation: [{ lock: 5, base: 0, size: 8 }], ...program });
  const net = createSwitchNet({ seed: 17, computeNodes: NODES, program: switchProgram });
  net.startServices(netlock, protocolOptions);
  const controlPort = net.clientPorts({ node: 1, client: 1_000 }).switchPort;
  net.failures.onComputeNodeFailed((node) => {
    for (const grant of switchProgram.purgeMachine(node).grants) controlPort?.send(grant);
  });
  let dead = false;
  const client = (node: number): LockClient => {
    const ports = net.clientPorts({ node, client: 0 });
    return netlock.createClient(node === DEAD ? severablePorts(ports, () => dead) : ports, protocolOptions);
  };
  const readers = { dead: client(DEAD), survivor: client(2) };
  const writer = client(1);
  const log: string[] = [];
  const run = (async () => {
    const first = script.head;
    const second = first === 'dead' ? 'survivor' : 'dead';
    const grants = { [first]: await readers[first].acquire(5, 'shared') } as Record<'dead' | 'survivor', Awaited<ReturnType<LockClient['acquire']>>>;
    grants[second] = await readers[second].acquire(5, 'shared');
    log.push('both readers hold');
    const writes = writer.acquire(5, 'exclusive', { timeoutMs: 3 }).then(
      (g) => (log.push('writer granted'), writer.release(g)),
      (e: unknown) => log.push(`writer ${e instanceof Error ? e.name : String(e)}`),
    );
    await net.clock.sleep(0.1 * MS);
    if (script.releasesFirst !== 'none') {
      await readers[script.releasesFirst].release(grants[script.releasesFirst]);
      log.push(`${script.releasesFirst} reader releases`);
    }
    await net.clock.sleep(0.1 * MS);
    dead = true; // SIGKILL of node 3
    await net.clock.sleep(0.5 * MS); // detection
    net.failures.fire(DEAD);
    await net.clock.sleep(0.5 * MS);
    if (script.resumes) {
      dead = false;
      await readers.dead.release(grants.dead);
      log.push('resumed dead reader releases');
      dead = true;
      await net.clock.sleep(0.1 * MS);
    }
    if (script.releasesFirst !== 'survivor') {
      log.push('survivor reader releases');
      await readers.survivor.release(grants.survivor);
    }
    await writes;
  })();
  await net.scheduler.run();
  await run;
  await net.stopServices();
  expect(switchProgram.queueState(5)?.count, 'entries left in the queue').toBe(0);
  return log;
}

describe('netlock: readers release out of order, then one of them dies', () => {
  it('the survivor behind the dead head reader released first: the purge ends the run and grants the writer', async () => {
    expect(await play({ head: 'dead', releasesFirst: 'survivor' })).toEqual(['both readers hold', 'survivor reader releases', 'writer granted']);
  });

  it('the dead reader behind the survivor released first: the writer waits for the survivor', async () => {
    expect(await play({ head: 'survivor', releasesFirst: 'dead' })).toEqual(['both readers hold', 'dead reader releases', 'survivor reader releases', 'writer granted']);
  });

  it('mutant: the positional release (the old code) leaves the lock held by nobody, or grants the writer beside the surviving reader', async () => {
    await expect(play({ head: 'dead', releasesFirst: 'survivor' }, { mutantPositionalRelease: true })).rejects.toThrow(/entries left in the queue/);
    const log = await play({ head: 'survivor', releasesFirst: 'dead' }, { mutantPositionalRelease: true }).catch(() => [] as string[]);
    expect(log.indexOf('writer granted')).toBeGreaterThanOrEqual(0);
    expect(log.indexOf('writer granted')).toBeLessThan(log.indexOf('survivor reader releases'));
  });

  it('mutant: a release that does not name its slot makes the purge count the dead reader twice: the writer is granted beside the survivor', async () => {
    const log = await play({ head: 'survivor', releasesFirst: 'dead' }, {}, { mutantReleaseWithoutSlot: 'true' }).catch(() => [] as string[]);
    expect(log.indexOf('writer granted')).toBeGreaterThanOrEqual(0);
    expect(log.indexOf('writer granted')).toBeLessThan(log.indexOf('survivor reader releases'));
  });

  it('a paused reader resumes after the purge: its release is fenced, the writer still waits for the survivor', async () => {
    expect(await play({ head: 'survivor', releasesFirst: 'none', resumes: true })).toEqual(['both readers hold', 'resumed dead reader releases', 'survivor reader releases', 'writer granted']);
  });

  // The purge also clears the dead hold's slot serial, which refuses the late release by itself;
  // the mutant therefore also takes the older check (`mutantLastReleasedOnly`).
  it('mutant: a purge without the fence (and the older release check) counts the resumed reader’s release twice: the writer is granted beside the survivor', async () => {
    const log = await play({ head: 'survivor', releasesFirst: 'none', resumes: true }, { mutantPurgeWithoutFence: true, mutantLastReleasedOnly: true }).catch(() => [] as string[]);
    expect(log.indexOf('writer granted')).toBeGreaterThanOrEqual(0);
    expect(log.indexOf('writer granted')).toBeLessThan(log.indexOf('survivor reader releases'));
  });
});
