/** Request header of a Connect stream: the memory-node incarnation its queue pair was bound to. */
export const INCARNATION_HEADER = 'lockfabric-incarnation';
/** How a refused stream's status details begin, so clients tell it from an ordinary disconnect. */
export const STALE_INCARNATION = 'memory node restarted';
