import { FabricAccessError } from '@lockfabric/ports';
import type { LocalMemory } from '@lockfabric/ports';
import type { NodeMemory } from './node-memory.js';
import { U64_MAX, hex, isU64 } from './u64.js';

export interface LocalMemoryOptions {
  /**
   * Also give stores a scheduling point in which a remote RMW can erase them (Table 1's
   * "Write × rRMW: not atomic" cell). Off by default: stores are then single atomic accesses.
   */
  readonly storeGap?: boolean;
}

/**
 * CPU access for processes co-located with `memory` (ALock's local cohort).
 *
 * Loads (and, by default, stores) are single word accesses, atomic with everything. `cas` and `faa`
 * run with `yieldPoint()` in the middle, and a remote RMW that writes the word during it makes the
 * local RMW non-atomic with it (see `NodeMemory.cpuRmw`): a local CAS and a remote CAS can then both
 * "succeed". CPU RMWs of one word are atomic with each other, node-wide, even across several
 * `LocalMemory` instances. The sim substrate's `yieldPoint` advances virtual time by a small random
 * amount so that the interleavings get explored.
 */
export function createLocalMemory(
  memory: NodeMemory,
  yieldPoint: () => Promise<void>,
  options: LocalMemoryOptions = {},
): LocalMemory {
  return {
    load: async (addr) => memory.cpuLoad(addr),
    store: async (addr, value) =>
      options.storeGap ? memory.cpuStoreWithGap(addr, value, yieldPoint) : memory.cpuStore(addr, value),
    cas: async (addr, compare, swap) => {
      requireU64('cas', 'compare', compare);
      requireU64('cas', 'swap', swap);
      return memory.cpuRmw(addr, (old) => (old === compare ? swap : undefined), yieldPoint);
    },
    faa: async (addr, add) => {
      requireU64('faa', 'add', add);
      return memory.cpuRmw(addr, (old) => (old + add) & U64_MAX, yieldPoint);
    },
    waitWhile: (addr, value, signal) => {
      const seen = memory.cpuLoad(addr);
      if (seen !== value || signal?.aborted) return Promise.resolve(seen);
      return new Promise((resolve) => {
        const finish = () => {
          unwatch();
          signal?.removeEventListener('abort', finish);
          resolve(memory.cpuLoad(addr));
        };
        // Woken by every store to the word; a store of the same value keeps waiting.
        const unwatch = memory.watchWord(addr, () => {
          if (memory.cpuLoad(addr) !== value) finish();
        });
        signal?.addEventListener('abort', finish, { once: true });
      });
    },
  };
}

function requireU64(what: string, field: string, value: unknown): void {
  if (!isU64(value)) {
    const shown = typeof value === 'bigint' ? hex(value) : typeof value;
    throw new FabricAccessError('bad-request', `local ${what} ${field} ${shown} is not an unsigned 64-bit value`);
  }
}
