export { NodeMemory } from './node-memory.js';
export type { NodeMemoryOptions, RegionInfo, RegisterOptions } from './node-memory.js';
export { PAGE_BYTES } from './paged-bytes.js';
export { createLocalMemory } from './local-memory.js';
export type { LocalMemoryOptions } from './local-memory.js';
export { NicCounters, VERB_OPCODES } from './nic-counters.js';
export type { NicCountersSnapshot, OpcodeCounts } from './nic-counters.js';
export { Nic } from './nic.js';
export type { NicOptions } from './nic.js';
export { DEFAULT_NIC_TIMING, NicScheduler, issueCostNs, nicServiceNs, validateNicTimingModel } from './nic-timing.js';
export type { AdmitOptions, NicLoad, NicSlot, NicTimingModel } from './nic-timing.js';
export { COST_MODELS, IDEAL_COST_MODEL, PAPER_COST_MODEL, parseCostModel, withOverrides } from './cost-model.js';
export type { CostModel } from './cost-model.js';
export { TokenBucket } from './token-bucket.js';
export type { TokenBucketOptions } from './token-bucket.js';
export { QueuePairVerbs } from './queue-pair-verbs.js';
export type { PostBatch, QueuePairVerbsOptions } from './queue-pair-verbs.js';
export { maskedCasResult, maskedFaaResult, widthMask } from './atomic-ops.js';
export { deriveRkey } from './rkey.js';
export { MAX_TRANSFER_BYTES } from './limits.js';
export {
  U64_MAX,
  U128_MAX,
  fieldBoundary,
  fieldMask,
  getField,
  hex,
  isU64,
  isU128,
  readU64LE,
  readU128LE,
  setField,
  u64ToBytes,
  u128ToBytes,
} from './u64.js';
export * from './descriptor-directory.js';
