/** Program decisions that are a grant decided in the switch (NetLock queues, the FissLock decider). */
export const SWITCH_GRANT_DECISIONS: readonly string[] = ['grant-switch', 'grant-handover', 'grant-notify', 'grant-free', 'grant-shared'];
