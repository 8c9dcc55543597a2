import type { AppInstance } from './deploy-checks.js';
import { templateOf } from './kustomize.js';
import type { Doc } from './yaml-docs.js';

/**
 * Every app pod asks to be scraped (prometheus.io/* annotations) on the port its health server
 * really binds (health.port of its validated config) and at /metrics, and exposes that port.
 */
export function scrapeProblems(instances: readonly AppInstance[]): string[] {
  const problems: string[] = [];
  const seen = new Set<Doc>();
  for (const { pod, config, container } of instances) {
    if (seen.has(pod.owner)) continue;
    seen.add(pod.owner);
    const annotations = ((templateOf(pod.owner)?.['metadata'] as Doc | undefined)?.['annotations'] ?? {}) as Record<string, string>;
    const where = `${String(pod.owner['kind'])}/${pod.name.replace(/-(pod)?\d+$/, '')}`;
    if (annotations['prometheus.io/scrape'] !== 'true') problems.push(`${where}: not annotated prometheus.io/scrape: "true"`);
    if (Number(annotations['prometheus.io/port']) !== config.health.port) problems.push(`${where}: prometheus.io/port is ${String(annotations['prometheus.io/port'])} but health.port is ${config.health.port}`);
    if (annotations['prometheus.io/path'] !== '/metrics') problems.push(`${where}: prometheus.io/path is ${String(annotations['prometheus.io/path'])}, not /metrics`);
    if (!(container.ports ?? []).some((p) => p.containerPort === config.health.port)) problems.push(`${where}: container does not expose the health port ${config.health.port}`);
  }
  return problems;
}
