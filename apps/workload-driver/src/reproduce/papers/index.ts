// Every paper `lockfabric reproduce` knows, in the order it runs them.
import type { PaperDef } from '../experiment.js';
import { ALOCK_PAPER } from './alock.js';
import { DECLOCK } from './declock.js';
import { DSLR_PAPER } from './dslr.js';
import { FISSLOCK_PAPER } from './fisslock.js';
import { SHIFTLOCK_PAPER } from './shiftlock.js';

export const PAPERS: readonly PaperDef[] = [FISSLOCK_PAPER, SHIFTLOCK_PAPER, DSLR_PAPER, DECLOCK, ALOCK_PAPER];
