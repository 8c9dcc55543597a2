import type { CostModel } from '@lockfabric/fabric';
import type { ProtocolDefinition, ProtocolOptions } from '@lockfabric/locks-common';
import type { LockPacket } from '@lockfabric/ports';
import type { InMemoryClusterSpec, LockManagerCpuConfig } from '@lockfabric/sim';

/** Packets a lock server works on (the rest, such as GRANTs to its machine's clients, pass). */
const SERVER_WORK = new Set<LockPacket['type']>(['acquire', 'release', 'probe', 'transfer', 'free']);
/** Packets a FissLock agent pool does not work on: a GRANT or ACK goes to a client, a transfer is the switch's. */
const NOT_AGENT_WORK = new Set<LockPacket['type']>(['grant', 'ack', 'transfer']);

/**
 * The lock-manager CPU of a cost model for one protocol's node services: every machine gets the
 * model's cores at the model's packet cost. Which packets are work follows the design (an agent
 * pool handles what the switch forwards to it; a lock server what is addressed to it), not the
 * protocol's id; the cost is the same for all.
 */
export function modelLockManagerCpu(model: CostModel, protocol: ProtocolDefinition): LockManagerCpuConfig | undefined {
  if (model.lockManagerPacketNs === undefined || !protocol.switchProgram) return undefined;
  const cores = model.lockManagerCores ?? 1;
  const agentPool = protocol.switchProgram === 'fisslock';
  return {
    packetNs: model.lockManagerPacketNs,
    coresFor: () => cores,
    isWork: agentPool ? (p) => !NOT_AGENT_WORK.has(p.type) : (p, machine) => p.dst === machine && SERVER_WORK.has(p.type),
  };
}

/** The cluster settings a cost model fixes (virtual time only: embedded runs ignore them). */
export function modelClusterSpec(model: CostModel): Pick<InMemoryClusterSpec, 'nicTiming' | 'verbLatencyNs' | 'messageLatencyNs' | 'switchLinkNs' | 'switchPipelineNs' | 'switchLinks'> {
  return {
    nicTiming: model.nic,
    verbLatencyNs: model.verbLatencyNs,
    messageLatencyNs: model.messageLatencyNs,
    switchLinkNs: model.switchLinkNs,
    switchPipelineNs: model.switchPipelineNs,
    switchLinks: model.switchLinks,
  };
}

/** Lock-manager packet times an ACK may wait in a saturated queue before its sender resends (docs/decisions/0002). */
const RTO_QUEUE_PACKETS = 1_000;
const MIN_RTO_NS = 200_000;

/**
 * Timer and pacing options sized to the model's network, by option name rather than protocol id:
 * a protocol whose definition has `pacingNs` (spacing sequenced packets so a jittered link keeps
 * their order) needs none on FIFO links; one with `rtoNs` gets a retransmission timeout covering
 * the lock-manager queue its ACKs wait in (1 000 packet times, never below 200 µs). Options the
 * caller gave win.
 */
export function modelProtocolOptions(model: CostModel, protocol: ProtocolDefinition, given: ProtocolOptions = {}): ProtocolOptions {
  const known = protocol.options ?? {};
  const sized: Record<string, string> = {};
  if ('pacingNs' in known && model.switchLinks === 'fifo') sized['pacingNs'] = '0';
  if ('rtoNs' in known && model.lockManagerPacketNs !== undefined) sized['rtoNs'] = String(Math.max(MIN_RTO_NS, RTO_QUEUE_PACKETS * model.lockManagerPacketNs));
  return { ...sized, ...given };
}
