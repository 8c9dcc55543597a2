import { ConfigError, clientKey } from '@lockfabric/ports';
import type { AcquireOptions, ClientPorts, Grant, LockClient, LockMode, Verbs } from '@lockfabric/ports';
import type { HistoryRecorder } from '@lockfabric/check';
import { createKeyChooser } from '../key-chooser.js';
import type { RunStats } from '../results.js';
import { FabricBackoff, errorCode, errorName, stopAfter } from '../runner.js';
import type { ClientLoopResult } from '../runner.js';
import type { RunClientsOptions, RunClientsResult } from '../run-clients.js';
import { opsBudgetFor } from '../spec.js';
import type { WorkloadSpec } from '../spec.js';
import type { VerbPhase } from '../verb-accounting.js';
import { BTreeClient, initialKey, newTreeCounters } from './btree.js';
import type { TreeCounters } from './btree.js';
import { BTREE_KEY_GAP, nodeBytes } from './btree-node.js';
import { decodeObject, encodeObject, objectStoreItemBytes, objectTag } from './object-store.js';
import type { ObjectOpRecord } from './object-store.js';
import { itemAddress, validateAppSpec } from './types.js';
import type { AppSpec, DataRegions } from './types.js';

/** What the clients of one process did, for the run's checks and figures. */
export class AppRunLog {
  readonly objectOps: ObjectOpRecord[] = [];
  /** Keys of committed inserts and updates (B+tree). */
  readonly committedKeys: number[] = [];
  readonly opLatenciesNs: number[] = [];
  /** Data verbs the application issued (lock verbs are the protocol's). */
  readonly dataVerbs = { read: 0, write: 0, faa: 0 };
  readonly tree: TreeCounters = newTreeCounters();
  ops = 0;
  /** Operations given up because a lock could not be taken, by error code. */
  readonly failedByCode: Record<string, number> = {};
  readonly opsByKind: Record<string, number> = {};
}

/** A B+tree lock acquire that fails (timeout) is retried this often before the operation is given up. */
const TREE_LOCK_ATTEMPTS = 1_000;

interface AppLoopInput {
  readonly app: AppSpec;
  readonly client: LockClient<Grant>;
  readonly ports: ClientPorts;
  /** The client's verbs before any accounting wrapper: data verbs are counted in the log, apart from lock verbs. */
  readonly dataVerbs: Verbs;
  readonly spec: WorkloadSpec;
  readonly regions: DataRegions;
  readonly maxNodes: number;
  readonly recorder: HistoryRecorder;
  readonly stats: RunStats;
  readonly log: AppRunLog;
  readonly shouldStop: () => boolean;
  readonly budget: number;
  readonly signal?: AbortSignal;
}

/** The writer id in object tags: unique per client address across a run. */
function writerId(ports: ClientPorts): number {
  return ports.self.node * 65_536 + (ports.self.client % 65_536);
}

/**
 * One client's application loop. Lock steps go into the history exactly as in the single-lock
 * loop (so the exclusion checker applies); data verbs go through the same `Verbs` port, hence the
 * same NIC queue, as the protocol's lock verbs.
 */
async function runAppLoop(input: AppLoopInput): Promise<ClientLoopResult> {
  const { app, client, ports, spec, regions, recorder, stats, log, shouldStop, signal } = input;
  const clock = ports.clock;
  const self = clientKey(ports.self);
  const acquireOptions: AcquireOptions = { ...(spec.timeoutMs !== undefined ? { timeoutMs: spec.timeoutMs } : {}), ...(signal ? { signal } : {}) };
  const verbs = countingVerbs(input.dataVerbs, log);
  let operations = 0;
  let acquired = 0;
  let acquireFailures = 0;
  let releaseFailures = 0;

  const acquire = async (lock: number, mode: LockMode): Promise<Grant | { error: unknown }> => {
    operations++;
    const invokedNs = clock.nowNs();
    recorder.invoke(self, 'acquire', lock, mode, invokedNs);
    try {
      const grant = await client.acquire(lock, mode, acquireOptions);
      const grantedNs = clock.nowNs();
      recorder.ok(self, 'acquire', lock, mode, grantedNs);
      stats.recordAcquire(grantedNs - invokedNs);
      acquired++;
      return grant;
    } catch (error) {
      recorder.fail(self, 'acquire', lock, mode, clock.nowNs(), errorName(error));
      stats.recordFailure('acquire', errorCode(error));
      acquireFailures++;
      return { error };
    }
  };
  const release = async (grant: Grant): Promise<void> => {
    const startNs = clock.nowNs();
    recorder.invoke(self, 'release', grant.lock, grant.mode, startNs);
    try {
      await client.release(grant);
      const doneNs = clock.nowNs();
      recorder.ok(self, 'release', grant.lock, grant.mode, doneNs);
      stats.recordRelease(doneNs - startNs);
    } catch (error) {
      recorder.fail(self, 'release', grant.lock, grant.mode, clock.nowNs(), errorName(error));
      stats.recordFailure('release', errorCode(error));
      releaseFailures++;
    }
  };
  const failed = (error: unknown) => {
    const code = errorCode(error);
    log.failedByCode[code] = (log.failedByCode[code] ?? 0) + 1;
  };

  const items = app.kind === 'objectstore' ? app.objects : app.keys;
  const keys = createKeyChooser({ locks: items, distribution: spec.distribution, seed: spec.seed }, ports.random);
  const writer = writerId(ports);
  let seq = 0;
  const fabric = new FabricBackoff(ports.random);
  const tree =
    app.kind === 'btree'
      ? new BTreeClient(app, input.maxNodes, regions, verbs, {
          lock: async (node) => {
            for (let attempt = 1; ; attempt++) {
              const got = await acquire(node, 'exclusive');
              if (!('error' in got)) return got;
              if (attempt >= TREE_LOCK_ATTEMPTS || signal?.aborted) throw got.error;
              await clock.sleep(fabric.nextDelayNs() / 100);
            }
          },
          unlock: release,
        }, log.tree)
      : undefined;
  const objectBytes = app.kind === 'objectstore' ? app.objectBytes : 0;
  const objectSlot = app.kind === 'objectstore' ? objectStoreItemBytes(app) : 0;

  let done = 0;
  while (done < input.budget && !shouldStop() && !signal?.aborted) {
    done++;
    ports.tables?.follow();
    const startNs = clock.nowNs();
    const rank = keys.next();
    let ok = true;
    if (app.kind === 'objectstore') {
      const isGet = ports.random.next() < app.getRatio;
      const kind = isGet ? 'get' : 'set';
      log.opsByKind[kind] = (log.opsByKind[kind] ?? 0) + 1;
      const addr = itemAddress(regions, rank, objectSlot);
      const skipLock = !isGet && app.mutantSkipLock === true;
      const grant = skipLock ? undefined : await acquire(rank, isGet ? 'shared' : 'exclusive');
      if (grant && 'error' in grant) {
        failed(grant.error);
        ok = false;
      } else {
        const csStartNs = clock.nowNs();
        if (isGet) {
          const seen = decodeObject(await verbs.read(addr, objectBytes, { lock: rank }));
          log.objectOps.push({ client: self, object: rank, kind, ...('tag' in seen ? { tag: seen.tag } : { torn: seen.torn }), csStartNs, csEndNs: clock.nowNs() });
        } else {
          const tag = objectTag(writer, ++seq);
          await verbs.write(addr, encodeObject(tag, objectBytes), { lock: rank });
          log.objectOps.push({ client: self, object: rank, kind, tag, csStartNs, csEndNs: clock.nowNs() });
        }
        if (spec.criticalSectionNs > 0) await clock.sleep(spec.criticalSectionNs);
        if (grant) await release(grant);
      }
    } else if (tree && app.kind === 'btree') {
      const r = ports.random.next();
      const kind = r < app.lookupRatio ? 'lookup' : r < app.lookupRatio + app.insertRatio ? 'insert' : 'update';
      log.opsByKind[kind] = (log.opsByKind[kind] ?? 0) + 1;
      const existing = initialKey(rank + 1);
      try {
        if (kind === 'lookup') await tree.lookup(existing);
        else {
          // A new key lands in the gap after an existing one (an insert of a key already there updates it).
          const key = kind === 'insert' ? existing + 1 + ports.random.int(BTREE_KEY_GAP - 1) : existing;
          await tree.upsert(key, objectTag(writer, ++seq));
          log.committedKeys.push(key);
        }
      } catch (error) {
        failed(error);
        ok = false;
        if (errorCode(error) === 'TREE_FULL') throw error;
      }
    }
    if (ok) {
      log.ops++;
      log.opLatenciesNs.push(clock.nowNs() - startNs);
    }
    if (spec.thinkNs > 0) await clock.sleep(spec.thinkNs);
  }
  return { operations, acquired, acquireFailures, releaseFailures };
}

/** The Verbs port with the application's own data verbs counted (READ, WRITE, FAA). */
function countingVerbs(verbs: Verbs, log: AppRunLog): Verbs {
  return {
    post: (batch, options) => verbs.post(batch, options),
    read: (addr, length, options) => (log.dataVerbs.read++, verbs.read(addr, length, options)),
    write: (addr, data, options) => (log.dataVerbs.write++, verbs.write(addr, data, options)),
    cas: (addr, compare, swap, options) => verbs.cas(addr, compare, swap, options),
    faa: (addr, add, options) => (log.dataVerbs.faa++, verbs.faa(addr, add, options)),
    maskedCas: (...args) => verbs.maskedCas(...args),
    maskedFaa: (...args) => verbs.maskedFaa(...args),
    isLocal: (addr) => verbs.isLocal(addr),
    cpu: verbs.cpu,
  };
}

/** `runClients` for a spec with `application`: every client runs the application loop. */
export async function runAppClients(options: RunClientsOptions): Promise<RunClientsResult> {
  const { protocol, spec, clock } = options;
  const app = spec.application;
  if (!app) throw new ConfigError(['runAppClients needs spec.application']);
  const problems = validateAppSpec(app);
  if (!options.dataRegions || options.dataRegions.length === 0) problems.push(`the ${app.kind} workload needs data regions on the memory nodes, and this substrate gave none`);
  if (options.crashProbability) problems.push('crash injection is not supported for application workloads');
  if (problems.length > 0) throw new ConfigError(problems);
  const log = options.appLog ?? new AppRunLog();
  const startNs = clock.nowNs();
  const shouldStop = stopAfter(clock, spec.durationMs);
  const loops = options.ports.map((original, index) => {
    let ports = original;
    let phase: VerbPhase | undefined;
    if (options.accounting) ports = { ...ports, verbs: options.accounting.wrapVerbs(ports.verbs, () => phase) };
    let client: LockClient<Grant> = protocol.createClient(ports, options.protocolOptions);
    if (options.accounting) client = options.accounting.wrapClient(client, (next) => (phase = next));
    return runAppLoop({
      app,
      client,
      ports,
      dataVerbs: original.verbs,
      spec,
      regions: options.dataRegions!,
      maxNodes: spec.locks,
      recorder: options.recorder,
      stats: options.stats,
      log,
      shouldStop,
      budget: opsBudgetFor(spec, index),
      ...(options.signal ? { signal: options.signal } : {}),
    });
  });
  const settled = await Promise.all(loops);
  return { startNs, endNs: clock.nowNs(), loops: settled, crashed: new Map() };
}

/** Bytes per item (object slot, tree node) of the application's data region. */
export function appItemBytes(app: AppSpec): number {
  return app.kind === 'objectstore' ? objectStoreItemBytes(app) : nodeBytes(app.fanout);
}
