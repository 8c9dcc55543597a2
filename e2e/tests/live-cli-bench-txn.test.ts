import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withLiveCluster } from './live-cluster.js';
import { runCli } from './cli.js';

// Transactions over the live substrate, through the command a user types: compute nodes run the
// strict-2PL transaction loop, stream their histories back, and the driver rebuilds the
// transaction log from them, reports the transaction figures and checks serializability.

interface TxnJson {
  readonly workload: string;
  readonly committed: number;
  readonly committedPerSec: number;
  readonly locksPerTxn: number;
  readonly aborts: number;
  readonly abortsByCode: Record<string, number>;
  readonly unfinished: number;
  readonly byType: Record<string, { committed: number; p50Us: number; p99Us: number }>;
  readonly serializable: boolean;
  readonly logMismatches: readonly string[];
}


describe('lockfabric bench --substrate live --workload tatp|tpcc', () => {
  let cluster: Awaited<ReturnType<typeof withLiveCluster>>;
  beforeAll(async () => {
    cluster = await withLiveCluster({ withSwitch: false, withCoordinator: false });
  }, 120_000);
  afterAll(async () => {
    await cluster?.stop();
  });

  const cases = [
    { protocol: 'caslock', args: ['--workload', 'tatp', '--subscribers', '5000'], types: ['GET_SUBSCRIBER_DATA', 'GET_ACCESS_DATA', 'UPDATE_LOCATION'] },
    { protocol: 'declock', args: ['--workload', 'tpcc', '--warehouses', '2'], types: ['NEW_ORDER', 'PAYMENT'] },
    // DSLR's long-running reads (Fig. 10) under a multi-slot lease (Fig. 11): table scans on live too
    { protocol: 'dslr', args: ['--workload', 'tpcc', '--warehouses', '1', '--long-read-probability', '0.03', '--long-read-ns', '2000000', '--long-read-slots', '3', '--opt', 'maxSlots=3'], types: ['NEW_ORDER', 'PAYMENT', 'CUSTOMER_SCAN'] },
  ];

  it.each(cases)('$protocol $args.1: exit 0, every transaction committed, serializable, figures per type', async ({ protocol, args, types }) => {
    const { code, stdout, stderr } = await runCli(['bench', '--substrate', 'live', '--cluster-dir', cluster.dir, '--protocol', protocol, ...args, '--clients', '8', '--operations', '300', '--seed', '5', '--json']);
    expect(code, stderr).toBe(0);
    const report = JSON.parse(stdout) as { violations: number; acquires: number; transactions: TxnJson };
    expect(report.violations).toBe(0);
    const t = report.transactions;
    expect(t.workload).toBe(args[1]);
    expect(t.logMismatches).toEqual([]);
    expect(t.serializable).toBe(true);
    expect(t.committed).toBe(300);
    expect(t.unfinished).toBe(0);
    expect(t.committedPerSec).toBeGreaterThan(0);
    expect(t.locksPerTxn).toBeGreaterThanOrEqual(1);
    expect(Object.values(t.byType).reduce((n, v) => n + v.committed, 0)).toBe(300);
    for (const type of types) {
      expect(t.byType[type]!.committed, type).toBeGreaterThan(0);
      expect(t.byType[type]!.p99Us).toBeGreaterThanOrEqual(t.byType[type]!.p50Us);
    }
    expect(t.aborts).toBe(Object.values(t.abortsByCode).reduce((a, b) => a + b, 0));
    // Every committed transaction's locks were acquired, and aborted attempts took some more.
    expect(report.acquires).toBeGreaterThanOrEqual(Math.round(300 * t.locksPerTxn));
  }, 180_000);
});
