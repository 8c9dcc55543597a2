export { BusQueueParticipant, QueueRecoveryCallError, queueRecoverySubject, type QueueRecoveryVerb } from './bus-queue-participant.js';
export { startQueueRecoveryHook, type DeadCompute, type QueueRecoveryHook, type QueueRecoveryHookDeps } from './queue-recovery-hook.js';
export { startQueueRecoveryResponder, type QueueResponder, type QueueResponderDeps, type QueueRun } from './queue-recovery-responder.js';
