export { BALANCES_KEY, SmallBankStore, connectRedis } from './store.js';
export { checkSmallBank, expectedDeltas, type CommittedRef, type SmallBankCheck } from './conservation.js';
export { REDLOCK_LEASE_MS, REDLOCK_PROTOCOL_ID, REDLOCK_RETRY_DELAY_MS, REDLOCK_RETRY_JITTER_MS, RedLockClient, redlockKey, type RedLockGrant } from './redlock-client.js';
