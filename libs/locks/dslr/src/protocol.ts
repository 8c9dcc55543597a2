import type { ProtocolDefinition } from '@lockfabric/locks-common';
import type { ClientPorts } from '@lockfabric/ports';
import { DslrClient } from './dslr-client.js';
import { DSLR_OPTION_HELP, readDslrOptions } from './options.js';
import type { DslrOptions } from './options.js';
import { busyPacing, dynamicPacing } from './pacing.js';

/** A DSLR client with the polling the options ask for (dynamic interval polling by default). */
export function createDslrClient(ports: ClientPorts, options: DslrOptions): DslrClient {
  const pacing = options.polling === 'busy' ? busyPacing() : dynamicPacing(options.waitUnitNs, options.leaseNs);
  return new DslrClient(ports, options, pacing, 'dslr');
}

export const dslr: ProtocolDefinition = {
  id: 'dslr',
  summary: 'DSLR (SIGMOD 2018): RDMA bakery lock, four 16-bit counters in one word; FAA to acquire and release, READ polls, leases, counter resets',
  fabric: 'verbs',
  capabilities: [],
  entryBytes: 8,
  modes: ['shared', 'exclusive'],
  options: DSLR_OPTION_HELP,
  createClient: (ports, options) => createDslrClient(ports, readDslrOptions(options)),
};
