import { alock } from '@lockfabric/lock-alock';
import { caslock } from '@lockfabric/lock-caslock';
import { declock } from '@lockfabric/lock-declock';
import { declockCql } from '@lockfabric/lock-declock-cql';
import { drtm } from '@lockfabric/lock-drtm';
import { dslr } from '@lockfabric/lock-dslr';
import { dslrBackoff } from '@lockfabric/lock-dslr-backoff';
import { fisslock } from '@lockfabric/lock-fisslock';
import { mcs } from '@lockfabric/lock-mcs';
import { netlock } from '@lockfabric/lock-netlock';
import { parlock } from '@lockfabric/lock-parlock';
import { srvlock } from '@lockfabric/lock-srvlock';
import { rpc } from '@lockfabric/lock-rpc';
import { traditional } from '@lockfabric/lock-traditional';
import { traditionalRo } from '@lockfabric/lock-traditional-ro';
import { shiftlock } from '@lockfabric/lock-shiftlock';
import { ncosed } from '@lockfabric/lock-ncosed';
import { rmaRw } from '@lockfabric/lock-rma-rw';
import { sherman } from '@lockfabric/lock-sherman';
import type { ProtocolDefinition } from '@lockfabric/locks-common';
import { ConfigError, PROTOCOL_IDS, isProtocolId } from '@lockfabric/ports';
import type { ProtocolId } from '@lockfabric/ports';

/** Every protocol LockFabric can run, by its DESIGN §10 id. */
const PROTOCOLS: ReadonlyMap<ProtocolId, ProtocolDefinition> = new Map([caslock, dslr, dslrBackoff, mcs, drtm, shiftlock, declock, declockCql, alock, fisslock, netlock, srvlock, parlock, rmaRw, ncosed, sherman, rpc, traditional, traditionalRo].map((p) => [p.id, p]));

/** The protocol a command runs when none is named: CASLock, the simplest RDMA lock. */
export const DEFAULT_PROTOCOL_ID: ProtocolId = caslock.id;

/**
 * Protocols whose lock table the coordinator can reset and drain (LockAdmin: DSLR's counters are
 * zeroed table-wide, DSLR §4.9); the first is the default of `lockfabric locks`.
 */
export function tableResetProtocolIds(): readonly [ProtocolId, ...ProtocolId[]] {
  return [dslr.id, dslrBackoff.id];
}

export function availableProtocols(): ProtocolDefinition[] {
  return PROTOCOL_IDS.flatMap((id) => {
    const protocol = PROTOCOLS.get(id);
    return protocol ? [protocol] : [];
  });
}

/** The protocol named `id`, or a ConfigError saying which ids exist and which run today. */
export function protocolById(id: string): ProtocolDefinition {
  if (!isProtocolId(id)) {
    throw new ConfigError([`unknown protocol ${JSON.stringify(id)}; protocol ids are ${PROTOCOL_IDS.join(', ')}`]);
  }
  const protocol = PROTOCOLS.get(id);
  // RedLock is a Redis lock, not a fabric protocol: only the SmallBank bench runs it (libs/smallbank).
  if (!protocol && id === 'redlock') throw new ConfigError(['protocol redlock runs only in `lockfabric bench --workload smallbank --substrate live` (it locks in Redis, not on the fabric)']);
  if (!protocol) {
    throw new ConfigError([
      `protocol ${id} is not available in this build; available: ${availableProtocols()
        .map((p) => p.id)
        .join(', ')}`,
    ]);
  }
  return protocol;
}
