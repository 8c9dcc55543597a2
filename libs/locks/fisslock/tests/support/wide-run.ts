import { LockTimeoutError } from '@lockfabric/ports';
import type { LockMode, LockPacket, NodeId } from '@lockfabric/ports';
import type { FaultSpec } from '@lockfabric/switch';
import { fissSim } from './fiss-sim.js';
import type { FissSimOptions } from './fiss-sim.js';

/** Loss, duplication, reordering and delay at 2% each on every switch egress. */
export const FAULTS_2: FaultSpec = {
  rules: [{ loss: 0.02, duplicate: 0.02, reorder: 0.02, reorderNsMax: 20_000, delay: 0.02, delayNsMin: 1_000, delayNsMax: 50_000 }],
};

export interface WideOptions {
  readonly faults?: FaultSpec;
  /** Locks the workers pick from (the decider holds 8). */
  readonly hotLocks?: number;
  readonly clientsPerNode?: number;
  readonly ops?: number;
  readonly maxEvents?: number;
  /** Keep a log of every packet of these locks (both directions, with virtual time). */
  readonly logLocks?: readonly number[];
  /** Test-only decider mutant (shows the exclusion check fails on a broken protocol). */
  readonly mutantNoIncarnationCheck?: boolean;
}

export interface WideResult {
  readonly violations: string[];
  readonly granted: number;
  readonly timedOut: number;
  readonly untyped: number;
  readonly unfinished: number;
  readonly log: string[];
  /** Agent-pool counters summed over the machines. */
  readonly counters: Record<string, number>;
}

/**
 * The recovery-sim workload without a failure: 8 locks on the decider, workers on 3 nodes take one
 * of `hotLocks` in a random mode and hold it 20–220 µs (long against the RTO, so packets of several
 * holders, waiters and transfers overlap). Exclusion is checked online at every grant.
 */
export async function runWide(seed: number, options: WideOptions = {}): Promise<WideResult> {
  const log: string[] = [];
  const logged = new Set(options.logLocks ?? []);
  const tap = (direction: 'in' | 'out', machine: NodeId, p: LockPacket, nowNs: number): void => {
    if (logged.has(p.lock)) log.push(`${nowNs} ${direction === 'out' ? `${machine}->sw` : `sw->${machine}`} ${describePacket(p)}`);
  };
  const simOptions: FissSimOptions = {
    seed,
    locks: 8,
    computeNodes: 3,
    mutantNoIncarnationCheck: options.mutantNoIncarnationCheck === true,
    ...(options.faults ? { faults: options.faults } : {}),
    ...(logged.size > 0 ? { tap } : {}),
  };
  const sim = fissSim(simOptions);
  const rnd = mulberry(seed);
  const holders = new Map<number, Map<string, LockMode>>();
  const violations: string[] = [];
  let granted = 0;
  let timedOut = 0;
  let untyped = 0;
  const clientsPerNode = options.clientsPerNode ?? 2;
  const ops = options.ops ?? 40;
  const hot = options.hotLocks ?? 4;
  const workers = sim.nodes.flatMap((node) =>
    Array.from({ length: clientsPerNode }, (_, k) => async () => {
      const client = sim.client(node, k);
      const me = `${node}/${k}`;
      for (let i = 0; i < ops; i++) {
        const lock = Math.floor(rnd() * hot);
        const mode: LockMode = rnd() < 0.5 ? 'shared' : 'exclusive';
        let grant;
        try {
          grant = await client.acquire(lock, mode, { timeoutMs: 200 });
        } catch (error) {
          if (error instanceof LockTimeoutError) timedOut++;
          else untyped++;
          continue;
        }
        granted++;
        const current = holders.get(lock) ?? new Map<string, LockMode>();
        holders.set(lock, current);
        for (const [who, held] of current) {
          if (held === 'exclusive' || mode === 'exclusive') {
            violations.push(`seed ${seed} @${sim.cluster.clock.nowNs()}: lock ${lock} ${mode} to ${me} (task ${grant.task}) while ${who} holds ${held}`);
            if (logged.has(lock)) log.push(`${sim.cluster.clock.nowNs()} VIOLATION ${mode} to ${me} task ${grant.task} while ${who} ${held}`);
          }
        }
        current.set(me, mode);
        if (logged.has(lock)) log.push(`${sim.cluster.clock.nowNs()} HOLD ${me} ${mode} task ${grant.task}`);
        await sim.cluster.clock.sleep(20_000 + Math.floor(rnd() * 200_000));
        current.delete(me);
        if (logged.has(lock)) log.push(`${sim.cluster.clock.nowNs()} RELEASE ${me} task ${grant.task}`);
        await client.release(grant);
        await sim.cluster.clock.sleep(Math.floor(rnd() * 50_000));
      }
    }),
  );
  let finished = false;
  const done = Promise.all(workers.map((w) => w())).then(() => (finished = true));
  await sim.scheduler.run({ untilNs: 5_000_000_000, maxEvents: options.maxEvents ?? 3_000_000 });
  if (finished) await done;
  const counters: Record<string, number> = {};
  for (const node of sim.nodes) for (const [k, v] of Object.entries(sim.pool(node).counters)) counters[k] = (counters[k] ?? 0) + v;
  await sim.stop();
  const unfinished = sim.nodes.length * clientsPerNode * ops - granted - timedOut - untyped;
  return { violations, granted, timedOut, untyped, unfinished, log, counters };
}

const FLAG_NAMES = ['AGENT', 'INVALID', 'GRANTED', 'BOUNCED', 'DUP', 'ABORT', 'REACHED', 'WW', 'CURSH'];

function describePacket(p: LockPacket): string {
  const flags = FLAG_NAMES.filter((_, i) => (p.flags & (1 << i)) !== 0);
  const status = p.type === 'ack' ? ` status=${['accepted', 'bounced', 'duplicate', 'freed'][(p.flags >>> 9) & 3]}` : '';
  const waiters = p.flags >>> 16 ? ` waiters=${p.flags >>> 16}` : '';
  return `${p.type} lock=${p.lock} m=${p.machine} task=${p.task} ${p.mode} inca=${p.incarnation} src=${p.agent ?? '-'} seq=${p.seq}${p.dst === undefined ? '' : ` dst=${p.dst}`} [${flags.join(',')}]${status}${waiters}`;
}

function mulberry(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
