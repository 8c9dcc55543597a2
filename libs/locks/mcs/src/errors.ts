// Kept for importers of lock-mcs; the class lives in @lockfabric/ports with the other lock errors.
export { GrantNotHeldError } from '@lockfabric/ports';
