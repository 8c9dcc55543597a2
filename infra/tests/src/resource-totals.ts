import type { Doc } from './yaml-docs.js';
import { podsOf } from './deploy-checks.js';

/** Sum of the resource requests of every pod the objects create, in millicores and MiB. */
export interface RequestTotals {
  readonly pods: number;
  readonly cpuMilli: number;
  readonly memoryMi: number;
}

const DECIMAL: Readonly<Record<string, number>> = { '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12 };
const BINARY: Readonly<Record<string, number>> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40 };

/** A Kubernetes quantity as a plain number (CPU in cores, memory in bytes); throws on anything else. */
export function parseQuantity(quantity: string | number): number {
  if (typeof quantity === 'number') return quantity;
  const match = /^([0-9]+(?:\.[0-9]+)?)(m|k|M|G|T|Ki|Mi|Gi|Ti)?$/.exec(quantity);
  if (!match) throw new RangeError(`not a Kubernetes quantity: '${quantity}'`);
  const [, digits = '', suffix = ''] = match;
  const value = Number(digits);
  if (suffix === 'm') return value / 1000;
  return value * (BINARY[suffix] ?? DECIMAL[suffix] ?? 1);
}

/**
 * Requests of every container of every pod (StatefulSet and Deployment replicas, one pod per Job),
 * as a scheduler would reserve them. A container without a request counts as zero.
 */
export function requestTotals(objects: readonly Doc[]): RequestTotals {
  let cpuMilli = 0;
  let memoryBytes = 0;
  const pods = podsOf(objects);
  for (const pod of pods) {
    for (const container of pod.containers) {
      const requests = (container.resources?.requests ?? {}) as Record<string, string | number>;
      cpuMilli += Math.round(parseQuantity(requests['cpu'] ?? 0) * 1000);
      memoryBytes += parseQuantity(requests['memory'] ?? 0);
    }
  }
  return { pods: pods.length, cpuMilli, memoryMi: memoryBytes / 2 ** 20 };
}
