import type { PluginCounter } from '@lockfabric/lock-catalog-control';
import type { MetricsRegistry } from '@lockfabric/telemetry';

/** Registers plug-ins' counters and, on each collect, adds what each reading grew by since the last. */
export function pluginCounters(metrics: MetricsRegistry, counters: readonly PluginCounter[]): { collect(): void } {
  const registered = counters.map((c) => ({ source: c, counter: metrics.counter({ name: c.name, help: c.help, labelNames: [...c.labelNames] }), seen: new Map<string, number>() }));
  return {
    collect: () => {
      for (const { source, counter, seen } of registered) {
        for (const { labels, total } of source.read()) {
          const key = JSON.stringify(labels);
          counter.inc(labels, total - (seen.get(key) ?? 0));
          seen.set(key, total);
        }
      }
    },
  };
}
