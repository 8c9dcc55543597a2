// The announcement lives in libs/live so the driver, which zeroes tables before runs, sends it too.
export { announceLockTable } from '@lockfabric/live';
