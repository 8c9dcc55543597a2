import { memoryServerProtocol } from '@lockfabric/lock-srvlock';
import type { MemoryServerDesign } from '@lockfabric/lock-srvlock';

/** Readers may pass each waiting writer at most this often (DSLR §6.4 counts bypasses; 10 per writer). */
export const READER_BYPASS_BOUND = 10;

/**
 * Traditional_RO (DSLR §6.4, Fig. 10): Traditional, except that a shared request arriving while
 * the object is held shared is granted past waiting exclusive requests (reader reordering), with
 * the bypasses per writer bounded so writers do not starve.
 */
export const TRADITIONAL_RO_DESIGN: MemoryServerDesign = {
  id: 'traditional-ro',
  recovery: { compute: { mechanism: 'fence', action: 'as rpc (holds and queued requests)' } },
  summary: 'DSLR §6.4 Traditional_RO: Traditional whose arriving readers pass waiting writers while held shared (bounded)',
  tag: 3,
  tryOnly: false,
  readerBypass: READER_BYPASS_BOUND,
  threads: 1,
  backoffNs: 0,
  backoffCapNs: 0,
};

export const traditionalRo = memoryServerProtocol(TRADITIONAL_RO_DESIGN);
