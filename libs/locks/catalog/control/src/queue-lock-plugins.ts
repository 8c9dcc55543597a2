import { alockQueueLock } from '@lockfabric/lock-alock-control';
import { mcsQueueLock } from '@lockfabric/lock-mcs-control';
import type { QueueLockPlugin } from '@lockfabric/control';
import type { CoordinatorPlugin } from './plugins.js';

/** Coordinator: a queue lock adds itself to the queue-lock recovery (its control package says so). */
const entry = (queueLock: QueueLockPlugin) => [queueLock.protocol, { coordinator: (): CoordinatorPlugin => ({ controlPlane: queueLock.controlPlane, counters: [] }) }] as const;

export const mcsPlugins = entry(mcsQueueLock);
export const alockPlugins = entry(alockQueueLock);
