import type { NodeId } from '@lockfabric/ports';
import { FREE, readerField, writerField } from './lock-word.js';

const TAG_BITS = 32n;
const NODE_SHIFT = 16n;

/**
 * Recovery hook (run by the memory node after it fenced `deadNode`): the word a caslock entry
 * should hold once the dead node's clients are gone, or undefined to leave it alone.
 *
 * exclusive variant: a word holding a dead client's tag becomes free. rw variant: a dead writer's
 * field is cleared and the reader count kept — reader announcements are anonymous counts, so a
 * dead reader's +1 cannot be told apart and stays (the lock then refuses writers until a reset
 * between runs; README "Recovery per protocol").
 *
 * Only safe once the dead node is fenced: otherwise a paused holder's late `WRITE 0` could free
 * the next holder's lock.
 */
export function caslockWordAfterDeath(word: bigint, deadNode: NodeId): bigint | undefined {
  if (word === FREE) return undefined;
  if (word < 1n << TAG_BITS) return word >> NODE_SHIFT === BigInt(deadNode) ? FREE : undefined;
  const writer = writerField(word);
  return writer >> NODE_SHIFT === BigInt(deadNode) ? readerField(word) : undefined;
}
