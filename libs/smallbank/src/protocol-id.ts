import type { ProtocolId } from '@lockfabric/ports';

/** RedLock's protocol id: a lock in Redis, run only by the SmallBank bench (not a fabric protocol, so not in the catalog). */
export const REDLOCK_PROTOCOL_ID: ProtocolId = 'redlock';
