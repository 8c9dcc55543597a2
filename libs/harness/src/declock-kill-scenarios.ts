import type { ProtocolDefinition, ProtocolOptions } from '@lockfabric/locks-common';
import type { Grant } from '@lockfabric/ports';
import { killRig } from './declock-kill-rig.js';

const US = 1_000;
const MS = 1_000_000;
const L = 0;
/** Waiters give up on a grant after 1 ms (no per-node stagger): the scenarios' time unit. */
export const DECLOCK_SCENARIO_OPTIONS: ProtocolOptions = { acquireTimeoutNs: 1_000_000, acquireTimeoutStaggerNs: 0 };

const outcome = (p: Promise<unknown>) =>
  p.then(
    () => 'granted',
    (error: unknown) => (error as Error).name,
  );

export interface ScenarioResult {
  readonly steps: string[];
  /** When the survivor that needed the dead node's lock got it, ns after the kill (undefined: never). */
  readonly survivorGrantAfterKillNs: number | undefined;
  readonly noticeAfterKillNs: number;
  readonly exclusionOk: boolean;
  readonly verdictOk: boolean;
  readonly summary: string;
}

/**
 * The dead node's client holds L when its node is killed; a survivor waits for L, times out
 * after 1 ms and resets the lock, and the coordinator's notice comes 5 ms after the kill. The
 * reset cannot drain (the dead holder never releases): it finishes once the notice names the
 * holder's node dead and the survivor's own node has acknowledged.
 */
export async function deadHolderScenario(protocol: ProtocolDefinition, options: ProtocolOptions = {}, rigOptions: { services?: boolean } = {}): Promise<ScenarioResult> {
  const rig = killRig(protocol, { ...DECLOCK_SCENARIO_OPTIONS, ...options }, rigOptions);
  const [survivor] = rig.survivorNodes as [number];
  const d = rig.client(rig.victimNode, 0);
  const a = rig.client(survivor, 1, 50);
  const steps: string[] = [];
  let grantedAtNs: number | undefined;
  await rig.play(async () => {
    await d.acquire(L);
    rig.kill();
    const killed = rig.killedAtNs as number;
    const waiting = a.acquire(L).then(async (grant) => {
      grantedAtNs = rig.now();
      await a.release(grant);
    });
    await rig.at(killed + 5 * MS);
    rig.declareDead();
    steps.push(`survivor: ${await outcome(waiting)}`);
  });
  return result(rig, steps, grantedAtNs, 5 * MS, [d.key]);
}

/**
 * The live stall (e2e kill test, "never"): a waiter of the dead node did its FAA, then died before
 * its entry WRITE. The survivor node's last local holder releases the CQL lock and must find that
 * entry valid to grant it; it never becomes valid. Meanwhile another client of the same node asks
 * for L and waits behind the release on the node's local lock. With the refetch bounded by the
 * waiter timeout the releaser gives up after 1 ms and resets, and the reset finishes at the
 * notice (2 ms after the kill); with `refetchTimeoutNs: inf` it refetches maxRefetch times first.
 */
export async function deadWaiterBeforeWriteScenario(protocol: ProtocolDefinition, options: ProtocolOptions = {}): Promise<ScenarioResult> {
  // Killed right after its acquire FAA on L completed: the FAA counted it in the header, no WRITE follows.
  const rig = killRig(protocol, { ...DECLOCK_SCENARIO_OPTIONS, ...options }, { killAfter: (verb) => verb.op === 'faa' && verb.lock === L });
  const [survivor] = rig.survivorNodes as [number];
  const b = rig.client(survivor, 2, 100);
  const c = rig.client(survivor, 3, 100);
  const d = rig.client(rig.victimNode, 0);
  const steps: string[] = [];
  let grantedAtNs: number | undefined;
  await rig.play(async () => {
    const gb = await b.acquire(L);
    void d.acquire(L).catch(() => undefined);
    while (!rig.victimDead) await rig.at(rig.now() + 1 * US);
    const killed = rig.killedAtNs as number;
    await rig.at(killed + 50 * US);
    const releasing = outcome(b.release(gb));
    await rig.at(killed + 100 * US);
    const cWait = c.acquire(L).then(async (grant: Grant) => {
      grantedAtNs = rig.now();
      await c.release(grant);
    });
    await rig.at(killed + 2 * MS);
    rig.declareDead();
    steps.push(`releaser: ${await releasing}`, `next on the node: ${await outcome(cWait)}`);
  }, 400);
  return result(rig, steps, grantedAtNs, 2 * MS, [d.key]);
}

/**
 * The resetter dies: the dead node's waiter times out behind a survivor's holder and claims the
 * reset (its id in the header), then its node is killed before it tells anyone. The holder's
 * release is void (it sees the reset id); the next survivor to ask finds a reset nobody will
 * finish. After the notice (6 ms) it takes the reset over (§3.6) and gets the lock.
 */
export async function deadResetterScenario(protocol: ProtocolDefinition, options: ProtocolOptions = {}): Promise<ScenarioResult> {
  const rig = killRig(protocol, { ...DECLOCK_SCENARIO_OPTIONS, ...options }, { killAfter: (verb) => verb.op === 'cas' });
  const [survivor] = rig.survivorNodes as [number];
  const h = rig.client(survivor, 1);
  const c = rig.client(survivor, 2, 50);
  const d = rig.client(rig.victimNode, 0);
  const steps: string[] = [];
  let grantedAtNs: number | undefined;
  await rig.play(async () => {
    const gh = await h.acquire(L);
    void d.acquire(L).catch(() => undefined);
    await rig.at(3 * MS);
    steps.push(rig.victimDead ? 'victim died after claiming the reset' : 'victim alive');
    await h.release(gh);
    const killed = rig.killedAtNs ?? rig.now();
    const cWait = c.acquire(L).then(async (grant) => {
      grantedAtNs = rig.now();
      await c.release(grant);
    });
    await rig.at(killed + 6 * MS);
    rig.declareDead();
    steps.push(`survivor: ${await outcome(cWait)}`);
  });
  return result(rig, steps, grantedAtNs, 6 * MS, [d.key]);
}

/**
 * Three compute nodes: H (survivor 1) holds L until 5 ms; the dead node's client waits behind it
 * and is killed at 100 µs; A (survivor 2) waits behind both, times out and resets. The notice
 * comes at 2 ms, but H still holds: the reset must wait for H's node to acknowledge (after H's
 * release), or A is granted L beside H. `mutantIgnoreResetAcks` does not wait.
 */
export async function liveHolderDuringResetScenario(protocol: ProtocolDefinition, options: ProtocolOptions = {}): Promise<ScenarioResult> {
  const rig = killRig(protocol, { ...DECLOCK_SCENARIO_OPTIONS, ...options }, { computeNodes: 3 });
  const [s1, s2] = rig.survivorNodes as [number, number];
  const h = rig.client(s1, 1);
  const a = rig.client(s2, 2, 50);
  const d = rig.client(rig.victimNode, 0);
  const steps: string[] = [];
  let grantedAtNs: number | undefined;
  await rig.play(async () => {
    const gh = await h.acquire(L);
    void d.acquire(L).catch(() => undefined);
    await rig.at(100 * US);
    rig.kill();
    const killed = rig.killedAtNs as number;
    const aWait = a.acquire(L).then(async (grant) => {
      grantedAtNs = rig.now();
      steps.push(`A granted at ${(rig.now() / MS).toFixed(3)} ms`);
      await a.release(grant);
    });
    await rig.at(killed + 2 * MS);
    rig.declareDead();
    await rig.at(5 * MS);
    steps.push(`H releases at ${(rig.now() / MS).toFixed(3)} ms`);
    await h.release(gh);
    steps.push(`A: ${await outcome(aWait)}`);
  });
  return result(rig, steps, grantedAtNs, 2 * MS, [d.key]);
}

function result(rig: ReturnType<typeof killRig>, steps: string[], grantedAtNs: number | undefined, noticeAfterKillNs: number, victimClients: string[]): ScenarioResult {
  const killed = rig.killedAtNs ?? 0;
  const verdict = rig.verdict(victimClients, killed);
  return {
    steps,
    survivorGrantAfterKillNs: grantedAtNs === undefined ? undefined : grantedAtNs - killed,
    noticeAfterKillNs,
    exclusionOk: verdict.exclusion.ok,
    verdictOk: verdict.ok,
    summary: `${steps.join('; ')} | exclusion ${verdict.exclusion.ok} liveness ${verdict.liveness.ok}`,
  };
}
