import type { ProtocolRecovery } from '@lockfabric/locks-common';
import { PROTOCOL_IDS } from '@lockfabric/ports';
import { availableProtocols } from './catalog.js';

/**
 * RedLock locks in Redis, not on the fabric, so it has no definition here (libs/smallbank runs it);
 * a dead client's key is freed by its TTL.
 */
const REDIS_KEY_TTL: ProtocolRecovery = { compute: { mechanism: 'lease', boundMs: 10_000, action: 'key TTL expires' } };

/**
 * Every protocol's recovery rules as its definition declares them, in PROTOCOL_IDS order: what the
 * coordinator's recovery book (libs/control) keeps one action per.
 */
export function protocolRecoveries(): ReadonlyMap<string, ProtocolRecovery> {
  const declared = new Map<string, ProtocolRecovery>(availableProtocols().map((p) => [p.id, p.recovery]));
  declared.set('redlock', REDIS_KEY_TTL);
  return new Map(PROTOCOL_IDS.flatMap((id) => {
    const recovery = declared.get(id);
    return recovery ? [[id, recovery] as const] : [];
  }));
}
