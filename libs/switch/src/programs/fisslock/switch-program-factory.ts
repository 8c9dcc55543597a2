import { ConfigError } from '@lockfabric/ports';
import { forwardProgram } from '../../forward-program.js';
import type { SwitchProgram } from '../../program.js';
import { FISSLOCK_POLICIES, fissLockDecider } from './decider.js';
import type { FissLockPolicy } from './decider.js';

/** Plain options as substrates and services pass them (`--opt policy=write-preferring`). */
export type SwitchProgramOptions = Readonly<Record<string, string | number | boolean | readonly number[]>>;

/**
 * Builds a data-plane program by name. `fisslock` reads `policy`, `lockCount`, `fallbackNodes`
 * `mutantNoIncarnationCheck` and `mutantNoIncaBound`; unknown names throw a ConfigError so a caller can add its own
 * programs (NetLock) in front of this one.
 */
export function createSwitchProgram(name: string, options: SwitchProgramOptions = {}): SwitchProgram {
  switch (name) {
    case 'forward':
      return forwardProgram();
    case 'fisslock': {
      const policy = options['policy'] ?? 'read-preferring';
      if (!FISSLOCK_POLICIES.includes(policy as FissLockPolicy)) throw new ConfigError([`fisslock: policy must be one of ${FISSLOCK_POLICIES.join(', ')}, got ${String(policy)}`]);
      const lockCount = options['lockCount'];
      const fallbackNodes = options['fallbackNodes'];
      if (lockCount !== undefined && typeof lockCount !== 'number') throw new ConfigError([`fisslock: lockCount must be a positive integer, got ${JSON.stringify(lockCount)}`]);
      if (fallbackNodes !== undefined && !Array.isArray(fallbackNodes)) throw new ConfigError([`fisslock: fallbackNodes must be a list of machine ids, got ${JSON.stringify(fallbackNodes)}`]);
      return fissLockDecider({
        policy: policy as FissLockPolicy,
        ...(typeof lockCount === 'number' ? { lockCount } : {}),
        ...(Array.isArray(fallbackNodes) ? { fallbackNodes: fallbackNodes as readonly number[] } : {}),
        mutantNoIncarnationCheck: options['mutantNoIncarnationCheck'] === true,
        mutantNoIncaBound: options['mutantNoIncaBound'] === true,
      });
    }
    default:
      throw new ConfigError([`switch program '${name}' is not available from createSwitchProgram`]);
  }
}
