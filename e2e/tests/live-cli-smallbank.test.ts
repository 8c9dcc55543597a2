import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer } from '@lockfabric/testkit';
import type { RedisServerHandle } from '@lockfabric/testkit';
import { BALANCES_KEY, SmallBankStore } from '@lockfabric/smallbank';
import { isAlive } from '@lockfabric/workload-driver';
import { withLiveCluster } from './live-cluster.js';
import { runCli } from './cli.js';

// SmallBank through the command a user types: accounts in a real redis-server, transactions on
// the live substrate's compute nodes (separate processes over NATS + gRPC), or with RedLock
// over the same Redis; the driver reads every balance back and checks it against the log.

interface SmallBankJson {
  readonly accounts: number;
  readonly committedTransfers: number;
  readonly total: number;
  readonly expectedTotal: number;
  readonly conserved: boolean;
  readonly mismatchedAccounts: number;
  readonly ok: boolean;
}

interface ReportJson {
  readonly violations: number;
  readonly transactions: { readonly workload: string; readonly committed: number; readonly serializable: boolean; readonly byType: Record<string, { committed: number }>; readonly smallbank: SmallBankJson };
}

describe('lockfabric bench --substrate live --workload smallbank', () => {
  let cluster: Awaited<ReturnType<typeof withLiveCluster>>;
  let redis: RedisServerHandle;
  beforeAll(async () => {
    // NetLock needs its switch program; RDMA protocols and RedLock never touch the switch.
    // The cluster starts its own redis-server too, as `cluster up` does; the mutant run uses that one.
    [cluster, redis] = await Promise.all([withLiveCluster({ switchProgram: 'netlock', withCoordinator: false, withRedis: true }), startRedisServer()]);
  }, 120_000);
  afterAll(async () => {
    await Promise.all([cluster?.stop(), redis?.stop()]);
  });

  const bench = (protocol: string, extra: readonly string[] = []) =>
    runCli(['bench', '--substrate', 'live', '--cluster-dir', cluster.dir, '--workload', 'smallbank', '--redis', redis.url, '--accounts', '3000', '--protocol', protocol, '--clients', '8', '--operations', '300', '--seed', '3', '--json', ...extra]);

  it.each(['caslock', 'netlock', 'redlock'])('%s: every transaction commits, the sum is conserved, every committed transfer is visible', async (protocol) => {
    const { code, stdout, stderr } = await bench(protocol);
    expect(code, stderr).toBe(0);
    const report = JSON.parse(stdout) as ReportJson;
    expect(report.violations).toBe(0);
    const t = report.transactions;
    expect(t.workload).toBe('smallbank');
    expect(t.committed).toBe(300);
    expect(t.serializable).toBe(true);
    expect(t.byType['BALANCE']!.committed + t.byType['TRANSFER']!.committed).toBe(300);
    expect(t.byType['TRANSFER']!.committed).toBeGreaterThan(t.byType['BALANCE']!.committed);
    const sb = t.smallbank;
    expect(sb.accounts).toBe(3000);
    expect(sb.committedTransfers).toBe(t.byType['TRANSFER']!.committed);
    expect(sb.total).toBe(sb.expectedTotal);
    expect(sb).toMatchObject({ conserved: true, mismatchedAccounts: 0, ok: true });
  }, 120_000);

  it('mutant: a transfer that locks only one of its accounts loses updates, and the check exits 1', async () => {
    // Few accounts and a 1 ms execution time between reading and writing balances: unlocked
    // read-modify-writes of the same account overlap.
    const { code, stdout, stderr } = await runCli(['bench', '--substrate', 'live', '--cluster-dir', cluster.dir, '--workload', 'smallbank', '--accounts', '8', '--protocol', 'caslock', '--clients', '8', '--operations', '300', '--txn-think-ns', '1000000', '--mutant-skip-lock', '--json']);
    expect(code, stderr).toBe(1);
    const sb = (JSON.parse(stdout) as ReportJson).transactions.smallbank;
    expect(sb.ok).toBe(false);
    expect(sb.mismatchedAccounts).toBeGreaterThan(0);
    // Without --redis the run used the cluster's redis-server: its table holds the 8 accounts.
    const store = await SmallBankStore.open(cluster.state.redisUrl!);
    try {
      expect(await store.redis.hlen(BALANCES_KEY)).toBe(8);
    } finally {
      await store.close();
    }
  }, 120_000);

  it('bad flags exit 2 listing every problem', async () => {
    const { code, stderr } = await runCli(['bench', '--workload', 'smallbank', '--protocol', 'redlock', '--accounts', '1', '--redis', 'http://nowhere', '--opt', 'x=1']);
    expect(code).toBe(2);
    for (const problem of ['--accounts', '--redis: expected redis://HOST:PORT', 'runs on --substrate live', '--opt: redlock takes no protocol options']) expect(stderr).toContain(problem);
    expect(stderr).not.toMatch(/\n\s+at /);
    const micro = await runCli(['bench', '--substrate', 'live', '--protocol', 'redlock', '--accounts', '5']);
    expect(micro.code).toBe(2);
    expect(micro.stderr).toContain('--protocol redlock runs only --workload smallbank');
    expect(micro.stderr).toContain('--accounts applies to --workload smallbank');
  });

  it('cluster down stops the cluster\'s redis-server with the other processes', async () => {
    const record = cluster.state.processes.find((p) => p.role === 'redis')!;
    expect(isAlive(record.pid)).toBe(true);
    await cluster.stop();
    expect(isAlive(record.pid)).toBe(false);
  });
});
