export { NatsQueueParticipant, QueueRecoveryCallError, queueRecoverySubject, type QueueRecoveryVerb } from './nats-queue-participant.js';
export { startQueueRecoveryHook, type DeadCompute, type QueueRecoveryHook, type QueueRecoveryHookDeps } from './queue-recovery-hook.js';
