import { join } from 'node:path';

/** Where `cluster up` keeps a local cluster's state and logs, and where commands look for it. */
export const DEFAULT_CLUSTER_DIR = join('.lockfabric', 'cluster');
