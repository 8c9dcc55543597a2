import { fromBinary } from '@bufbuild/protobuf';
import type { NatsConnection } from '@nats-io/transport-node';
import { startFissStuckReporter } from '@lockfabric/lock-catalog-control';
import { NatsControlBus, connectNats, createSubjects, silentLogger } from '@lockfabric/live';
import { RealClock } from '@lockfabric/realtime';
import type { AgentPool, StuckReport } from '@lockfabric/lock-catalog';
import { startNatsServer } from '@lockfabric/testkit';
import type { NatsServerHandle } from '@lockfabric/testkit';
import { FissStuckLockSchema } from '@lockfabric/wire';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const subjects = createSubjects('stucktest');

/** The two members of an agent pool the reporter uses (the watchdog itself is tested in lock-fisslock). */
function poolStandIn() {
  const dismissed: number[] = [];
  const pool = { onStuckLock: undefined as ((r: StuckReport) => void) | undefined, dismissStuck: (lid: number) => void dismissed.push(lid) };
  return { pool, dismissed, asPool: pool as unknown as AgentPool };
}

describe('FissLock stuck-lock reporter (watchdog → coordinator)', () => {
  let nats: NatsServerHandle;
  let nc: NatsConnection;

  beforeAll(async () => {
    nats = await startNatsServer();
    nc = await connectNats({ servers: nats.url, name: 'stuck-reporter-test', logger: silentLogger });
  });
  afterAll(async () => {
    await nc?.close();
    await nats?.stop();
  });

  it("publishes the reports of the current run's pool with their reasons, suspicions included, and follows a new run's pool", async () => {
    const heard: { machine: number; lock: number; reason: string }[] = [];
    const sub = nc.subscribe(subjects.protocolReport('fiss', 'stuck'), { callback: (_e, msg) => void heard.push(fromBinary(FissStuckLockSchema, msg.data)) });
    const first = poolStandIn();
    let current: AgentPool | undefined = first.asPool;
    const reporter = startFissStuckReporter({ bus: new NatsControlBus(nc), clock: new RealClock(), subjects, node: 4, pool: () => current, logger: silentLogger, attachEveryMs: 10 });
    try {
      first.pool.onStuckLock?.({ lid: 7, reason: 'agent-without-holders', atNs: 1 });
      first.pool.onStuckLock?.({ lid: 8, reason: 'stalled-queue', atNs: 2 });
      const second = poolStandIn();
      current = second.asPool;
      const deadline = Date.now() + 5_000;
      while (!second.pool.onStuckLock && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
      second.pool.onStuckLock?.({ lid: 9, reason: 'bouncing', atNs: 3 });
      await nc.flush();
      while (heard.length < 3 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(heard.map((h) => ({ machine: h.machine, lock: h.lock, reason: h.reason }))).toStrictEqual([
        { machine: 4, lock: 7, reason: 'agent-without-holders' },
        // a suspicion: the coordinator confirms it before it repairs (fiss-stuck-suspicion.test.ts in apps/coordinator)
        { machine: 4, lock: 8, reason: 'stalled-queue' },
        { machine: 4, lock: 9, reason: 'bouncing' },
      ]);
      expect([reporter.published(), reporter.suspicions()]).toStrictEqual([3, 1]);
      // each flagged lock may be flagged again later (after the repair)
      expect([first.dismissed, second.dismissed]).toStrictEqual([[7, 8], [9]]);
    } finally {
      reporter.close();
      sub.unsubscribe();
    }
  });
});
