export type { CurrentRun } from '@lockfabric/run-host';
export { EPOCH_HEADER, EpochStamp, epochStampingNats, followMembershipEpochs } from './epoch-stamp.js';
export { DescriptorMemoryExecutor } from './descriptor-executor.js';
