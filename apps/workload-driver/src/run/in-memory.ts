import { runInMemory as runWithDefinition } from '@lockfabric/harness';
import type { InMemoryRunOptions as HarnessOptions, InMemoryRunResult } from '@lockfabric/harness';
import { protocolById } from '@lockfabric/lock-catalog';

export type InMemoryRunOptions = Omit<HarnessOptions, 'protocol'> & { readonly protocol: string };
export type { InMemoryRunResult };

/** Runs a workload on `sim` or `embedded` with the protocol named by its id, sized for the workload. */
export function runInMemory(options: InMemoryRunOptions): Promise<InMemoryRunResult> {
  const definition = protocolById(options.protocol);
  const workload = { clients: options.spec.clients, computeNodes: options.computeNodes ?? 2 };
  return runWithDefinition({ ...options, protocol: definition.sizedFor?.(workload, options.protocolOptions) ?? definition });
}
