import { LockTimeoutError } from '@lockfabric/ports';
import type { LockMode } from '@lockfabric/ports';
import type { FaultSpec } from '@lockfabric/switch';
import type { FissSimOptions } from './fiss-sim.js';
import { fissSim } from './fiss-sim.js';

export interface SweepResult {
  readonly violations: string[];
  readonly granted: number;
  readonly failed: number;
  readonly untyped: number;
  readonly agentsPerLockMax: number;
  readonly modeMismatch: number;
  /** Workers still running when the event budget ran out (a stall), with what was pending then. */
  readonly stalled: string | undefined;
  /** The simulation ran out of events: nothing left circling, no retransmission pending. */
  readonly quiescent: boolean;
  /** Acquires that neither were granted nor failed with a typed error. */
  readonly unfinished: number;
}

export const FAULTS_10: FaultSpec = {
  rules: [{ loss: 0.1, duplicate: 0.1, reorder: 0.1, reorderNsMax: 20_000, delay: 0.1, delayNsMin: 1_000, delayNsMax: 50_000 }],
};

/**
 * One seed: clients on every compute node take random locks in random modes and release them.
 * Exclusion is checked online (the simulator runs one event at a time): a grant that conflicts
 * with a current holder is a violation. Also checks one agent per lock and that a live agent's
 * mode equals the decider's (Lemma 1) after every grant.
 */
export async function runSeed(
  seed: number,
  options: FissSimOptions & { clientsPerNode?: number; ops?: number; maxEvents?: number; onSim?: (sim: ReturnType<typeof fissSim>) => void } = {},
): Promise<SweepResult> {
  const sim = fissSim({ seed, locks: options.locks ?? 3, computeNodes: options.computeNodes ?? 3, ...options });
  options.onSim?.(sim);
  const rnd = mulberry(seed);
  const holders = new Map<number, Map<string, LockMode>>();
  const violations: string[] = [];
  let granted = 0;
  let failed = 0;
  let untyped = 0;
  let agentsPerLockMax = 0;
  let modeMismatch = 0;
  const clientsPerNode = options.clientsPerNode ?? 2;
  const ops = options.ops ?? 12;
  const lockCount = options.locks ?? 3;
  const audit = (lock: number): void => {
    let agents = 0;
    for (const node of sim.nodes) {
      const a = sim.pool(node).agents.get(lock);
      if (!a) continue;
      agents++;
      const meta = sim.decider.meta(lock);
      if (!meta.free && meta.mid === node && a.mode !== meta.mode) modeMismatch++;
    }
    agentsPerLockMax = Math.max(agentsPerLockMax, agents);
  };
  const workers = sim.nodes.flatMap((node) =>
    Array.from({ length: clientsPerNode }, (_, k) => async () => {
      const client = sim.client(node, k);
      const me = `${node}/${k}`;
      for (let i = 0; i < ops; i++) {
        const lock = Math.floor(rnd() * lockCount);
        const mode: LockMode = rnd() < 0.5 ? 'shared' : 'exclusive';
        let grant;
        try {
          grant = await client.acquire(lock, mode, { timeoutMs: 30 });
        } catch (error) {
          if (error instanceof LockTimeoutError) failed++;
          else untyped++;
          continue;
        }
        granted++;
        const current = holders.get(lock) ?? new Map<string, LockMode>();
        holders.set(lock, current);
        for (const [who, held] of current) {
          if (held === 'exclusive' || mode === 'exclusive') violations.push(`seed ${seed}: lock ${lock} ${mode} to ${me} while ${who} holds ${held}`);
        }
        current.set(me, mode);
        audit(lock);
        await sim.cluster.clock.sleep(Math.floor(rnd() * 5_000));
        current.delete(me);
        await client.release(grant);
      }
    }),
  );
  let finished = false;
  const done = Promise.all(workers.map((w) => w())).then(() => (finished = true));
  const outcome = await sim.scheduler.run({ untilNs: 2_000_000_000, maxEvents: options.maxEvents ?? 2_000_000 });
  const stalled = finished ? undefined : describeStall(sim, outcome);
  if (finished) await done;
  await sim.stop();
  const unfinished = sim.nodes.length * clientsPerNode * ops - granted - failed - untyped;
  return { violations, granted, failed, untyped, agentsPerLockMax, modeMismatch, stalled, quiescent: outcome.reason === 'idle', unfinished };
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

/** What a stalled run was waiting on: per machine, agents, pending agents, unacknowledged packets and waiting tasks. */
function describeStall(sim: ReturnType<typeof fissSim>, outcome: unknown): string {
  const lines = [`run ended: ${JSON.stringify(outcome)}`];
  for (const node of sim.nodes) {
    const pool = sim.pool(node);
    const agents = [...pool.agents].map(([lid, a]) => `${lid}:${a.mode}/inca${a.inca}/h[${[...a.holders].join(',')}]/q[${a.wqueue.map((w) => `${w.mid}:${w.task}${w.mode[0]}`).join(',')}]`);
    lines.push(`node ${node}: agents {${agents.join(' ')}} pending [${[...pool.pending.keys()].join(',')}] unacked ${JSON.stringify(pool.link.outstandingPackets())} listeners [${[...pool.listeners.keys()].join(',')}]`);
  }
  for (let lid = 0; lid < sim.decider.lockCount(); lid++) lines.push(`decider ${lid}: ${JSON.stringify(sim.decider.meta(lid))}`);
  return lines.join('\n');
}
