import type { NicTimingModel } from './nic-timing.js';

/**
 * The simulated hardware a `sim` run is charged for: what one NIC, one link, the switch and a
 * lock-manager core cost. A model is data about the machines, never about a protocol: every
 * protocol in a run sees the same one. docs/cost-model.md gives the source of every value.
 */
export interface CostModel {
  /** `paper`, `ideal`, or the name a model file gives itself. */
  readonly name: string;
  /** Per-NIC service times and inbound ceilings (every NIC; the memory nodes' are the ones that saturate). */
  readonly nic: NicTimingModel;
  /** One-way CN–MN latency of a verb. */
  readonly verbLatencyNs: number;
  /** One-way CN–CN message latency (mailbox). */
  readonly messageLatencyNs: number;
  /** One-way machine–switch link latency. */
  readonly switchLinkNs: number;
  /** Time a packet spends in the switch pipeline. */
  readonly switchPipelineNs: number;
  /** One-way extra latency between racks (ToR → spine → ToR), paid by a packet to or from another rack's switch (FissLock §5.4). */
  readonly interRackNs: number;
  /** `fifo`: one Ethernet link keeps send order; `jittered`: every packet draws its own delay. */
  readonly switchLinks: 'fifo' | 'jittered';
  /** Lock-manager CPU per packet a node service handles from the switch; absent: services are free. */
  readonly lockManagerPacketNs?: number;
  /** Lock-manager cores per machine, when `lockManagerPacketNs` is set. */
  readonly lockManagerCores?: number;
}

/** The behaviour before the model existed: uncapped NICs, jittered links, free lock-manager CPU. */
export const IDEAL_COST_MODEL: CostModel = Object.freeze({
  name: 'ideal',
  nic: Object.freeze({ readBaseNs: 50, writeBaseNs: 50, perByteNs: 0.08, casNs: 150, faaNs: 150, maskedAtomic8Ns: 200, maskedAtomic16Ns: 240, headOfLineBlocking: true }),
  verbLatencyNs: 1_000,
  messageLatencyNs: 1_500,
  switchLinkNs: 1_000,
  switchPipelineNs: 1_000,
  interRackNs: 2_000,
  switchLinks: 'jittered',
});

/**
 * The default for reproduction: values read off the papers' testbeds (ConnectX-4/5 at 100 Gb/s, a
 * Tofino switch, DPDK-class lock servers). Derivations in docs/cost-model.md.
 */
export const PAPER_COST_MODEL: CostModel = Object.freeze({
  name: 'paper',
  nic: Object.freeze({
    // PCIe DMA per request plus the payload at 100 Gb/s (ShiftLock §4.1, DecLock §6.1 testbeds).
    readBaseNs: 50,
    writeBaseNs: 50,
    perByteNs: 0.08,
    // One word serialises its atomics: 240 clients on one CAS lock drive ≈ 2.6 M CAS/s (ShiftLock §2.2).
    casNs: 385,
    faaNs: 385,
    // Extended atomics take the NIC's slower path; no paper gives a figure, ratios kept from `ideal`.
    maskedAtomic8Ns: 515,
    maskedAtomic16Ns: 615,
    // MN-NIC saturated by CAS retries: 0.20 M acquires/s × ≈ 41 verbs each (DecLock §2.2, Fig. 3).
    atomicIops: 8_000_000,
    // READ polls cost less of the MN-NIC than CAS (DecLock §2.3, §6.2); our choice of ratio: 2×.
    readWriteIops: 16_000_000,
    headOfLineBlocking: true,
  }),
  // RDMA round trip ≤ 2 µs (ShiftLock §1): 1 µs each way, for verbs and CN–CN messages alike.
  verbLatencyNs: 1_000,
  messageLatencyNs: 1_000,
  // Switch pipeline under 1 µs (FissLock §2.3); machine–switch links as one hop of the 2 µs RTT.
  switchLinkNs: 1_000,
  switchPipelineNs: 1_000,
  // FissLock §5.4 gives no figure for a remote rack; two more switch hops (ToR → spine → ToR) at the
  // machine–switch hop's 1 µs each: an assumption, see docs/cost-model.md.
  interRackNs: 2_000,
  // An Ethernet link delivers in send order (FissLock §5 relies on it for its sequence numbers).
  switchLinks: 'fifo',
  // A server CPU core spends ≈ 1 µs per lock packet (FissLock §2.2, §7.1: one core per node's agent).
  lockManagerPacketNs: 1_000,
  lockManagerCores: 1,
});

export const COST_MODELS: Readonly<Record<string, CostModel>> = Object.freeze({ paper: PAPER_COST_MODEL, ideal: IDEAL_COST_MODEL });

const NIC_COSTS = ['readBaseNs', 'writeBaseNs', 'perByteNs', 'casNs', 'faaNs', 'maskedAtomic8Ns', 'maskedAtomic16Ns'] as const;
const NIC_CEILINGS = ['iopsCap', 'atomicIops', 'readWriteIops'] as const;
const LATENCIES = ['verbLatencyNs', 'messageLatencyNs', 'switchLinkNs', 'switchPipelineNs', 'interRackNs'] as const;

/**
 * A model from untrusted JSON: fields left out take `base`'s value (default `paper`). Returns the
 * model or every problem found, never throws.
 */
export function parseCostModel(json: unknown, base: CostModel = PAPER_COST_MODEL): { model?: CostModel; problems: string[] } {
  const problems: string[] = [];
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return { problems: ['a cost model is a JSON object'] };
  const input = json as Record<string, unknown>;
  const known = new Set(['name', 'nic', 'switchLinks', 'lockManagerPacketNs', 'lockManagerCores', ...LATENCIES]);
  for (const key of Object.keys(input)) if (!known.has(key)) problems.push(`unknown field ${JSON.stringify(key)}`);
  if (input['name'] !== undefined && (typeof input['name'] !== 'string' || input['name'].trim() === '')) problems.push('name: expected a non-empty string');
  const nicIn = input['nic'] ?? {};
  const nic: Record<string, unknown> = { ...base.nic };
  if (typeof nicIn !== 'object' || nicIn === null || Array.isArray(nicIn)) problems.push('nic: expected an object');
  else {
    const nicKnown = new Set<string>([...NIC_COSTS, ...NIC_CEILINGS, 'headOfLineBlocking']);
    for (const [key, value] of Object.entries(nicIn)) {
      if (!nicKnown.has(key)) problems.push(`nic.${key}: unknown field`);
      else if (key === 'headOfLineBlocking') {
        if (typeof value !== 'boolean') problems.push(`nic.headOfLineBlocking: expected true or false, got ${JSON.stringify(value)}`);
        else nic[key] = value;
      } else if ((NIC_CEILINGS as readonly string[]).includes(key)) {
        // null turns a ceiling off
        if (value === null) delete nic[key];
        else if (!isNumber(value) || value <= 0) problems.push(`nic.${key}: expected a positive number of requests per second or null, got ${JSON.stringify(value)}`);
        else nic[key] = value;
      } else if (!isNumber(value) || value < 0) problems.push(`nic.${key}: expected a number of ns ≥ 0, got ${JSON.stringify(value)}`);
      else nic[key] = value;
    }
  }
  const out: Record<string, unknown> = { ...base, name: typeof input['name'] === 'string' ? input['name'] : 'file' };
  for (const key of LATENCIES) {
    const value = input[key];
    if (value === undefined) continue;
    if (!isNumber(value) || value < 0) problems.push(`${key}: expected a number of ns ≥ 0, got ${JSON.stringify(value)}`);
    else out[key] = value;
  }
  const links = input['switchLinks'];
  if (links !== undefined && links !== 'fifo' && links !== 'jittered') problems.push(`switchLinks: expected "fifo" or "jittered", got ${JSON.stringify(links)}`);
  else if (links !== undefined) out['switchLinks'] = links;
  const packetNs = input['lockManagerPacketNs'];
  if (packetNs === null) delete out['lockManagerPacketNs'];
  else if (packetNs !== undefined && (!isNumber(packetNs) || packetNs < 0)) problems.push(`lockManagerPacketNs: expected a number of ns ≥ 0 or null, got ${JSON.stringify(packetNs)}`);
  else if (packetNs !== undefined) out['lockManagerPacketNs'] = packetNs;
  const cores = input['lockManagerCores'];
  if (cores !== undefined && (!Number.isInteger(cores) || (cores as number) < 1)) problems.push(`lockManagerCores: expected an integer ≥ 1, got ${JSON.stringify(cores)}`);
  else if (cores !== undefined) out['lockManagerCores'] = cores;
  out['nic'] = nic;
  return problems.length > 0 ? { problems } : { model: out as unknown as CostModel, problems };
}

/**
 * The model with the memory-node NIC's ceiling or the CN–CN latency changed (bench --mn-iops,
 * --cn-latency-ns). `mnIops` is the READ/WRITE ceiling, the NIC's headline figure; atomics keep
 * the model's ratio to it (half, under `paper`), or get the same ceiling when the model has none.
 */
export function withOverrides(model: CostModel, overrides: { mnIops?: number; cnLatencyNs?: number }): CostModel {
  let out = model;
  if (overrides.mnIops !== undefined) {
    const { readWriteIops, atomicIops } = model.nic;
    const ratio = readWriteIops && atomicIops ? atomicIops / readWriteIops : 1;
    out = { ...out, name: `${out.name}+mn-iops=${overrides.mnIops}`, nic: { ...out.nic, readWriteIops: overrides.mnIops, atomicIops: overrides.mnIops * ratio } };
  }
  if (overrides.cnLatencyNs !== undefined) out = { ...out, name: `${out.name}+cn-latency-ns=${overrides.cnLatencyNs}`, messageLatencyNs: overrides.cnLatencyNs };
  return out;
}

function isNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}
