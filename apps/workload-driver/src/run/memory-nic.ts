import { parsePrometheusText, sumSamples } from '@lockfabric/telemetry';
import type { ProcessRecord } from '../cluster/local-cluster.js';

/** The memory node's counter of verbs its NIC served (apps/memory-node main.ts). */
const NIC_VERBS_SERIES = 'lockfabric_nic_verbs_total';

/**
 * Verbs each memory node's NIC has served so far, by process name, read from its /metrics. A node
 * that does not answer is left out (a run under faults still reports the others).
 */
export async function memoryNicVerbs(memories: readonly ProcessRecord[]): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  await Promise.all(
    memories.map(async (m) => {
      if (m.health === undefined) return;
      try {
        const response = await fetch(`http://127.0.0.1:${m.health}/metrics`, { signal: AbortSignal.timeout(2_000) });
        if (response.ok) out[m.name] = sumSamples(parsePrometheusText(await response.text()), NIC_VERBS_SERIES);
      } catch {
        // unreachable or not Prometheus text: no figure for this node
      }
    }),
  );
  return out;
}

/** The IOPS cap a memory node was started with (`--memory.iops-cap=N`), if any. */
export function iopsCapOf(record: ProcessRecord): number | undefined {
  const flag = record.argv.find((a) => a.startsWith('--memory.iops-cap='));
  const cap = flag === undefined ? NaN : Number(flag.slice('--memory.iops-cap='.length));
  return cap > 0 ? cap : undefined;
}

/**
 * Verbs served during a run (after − before) and, for nodes with a cap, their use of it: served
 * verbs per second over the run ÷ the cap (DSLR Fig. 19). Nodes missing from either scrape are left out.
 */
export function nicFigures(before: Readonly<Record<string, number>>, after: Readonly<Record<string, number>>, elapsedNs: number, caps: Readonly<Record<string, number>>): { verbs: Record<string, number>; utilisation: Record<string, number> } {
  const verbs: Record<string, number> = {};
  const utilisation: Record<string, number> = {};
  for (const [name, end] of Object.entries(after)) {
    const start = before[name];
    if (start === undefined) continue;
    verbs[name] = Math.max(0, end - start);
    const cap = caps[name];
    if (cap !== undefined && elapsedNs > 0) utilisation[name] = verbs[name] / (elapsedNs / 1e9) / cap;
  }
  return { verbs, utilisation };
}
