import { ConfigError } from '@lockfabric/ports';
import type { DescribedSwitchProgram, ProtocolOptions } from '@lockfabric/locks-common';
import { fissLockDeciderOptions } from './switch-program.js';

/**
 * A live FissLock run on a switch started on its own (`cluster up --switch-program fisslock`):
 * clients and decider must agree on the grant policy, and every id the clients send the switch
 * without the fallback flag must be one the decider keeps. Either mismatch lets the run go on with
 * wrong answers (a write-preferring agent on a read-preferring decider; ids past the decider
 * forwarded as if the lock were remote), so it is refused before any client starts.
 */
export function checkFissLockSwitch(described: DescribedSwitchProgram, workloadLocks: number, protocolOptions: ProtocolOptions = {}): void {
  const wanted = fissLockDeciderOptions(workloadLocks, protocolOptions);
  const issues: string[] = [];
  if (described.policy !== wanted.policy) {
    issues.push(`the switch's fisslock decider is ${described.policy}; the clients are ${wanted.policy ?? 'read-preferring'} (give the switch --switch.policy=${wanted.policy ?? 'read-preferring'}, or the run --opt policy=${described.policy})`);
  }
  const switchLocks = Number(described.lockCount);
  // The clients send ids below min(locks, switchCapacity or the capacity) to the decider.
  const configured = Number(protocolOptions['switchCapacity'] ?? '0');
  const clientSplit = configured > 0 ? configured : Math.min(workloadLocks, wanted.lockCount ?? workloadLocks);
  if (clientSplit > switchLocks) {
    issues.push(`the switch's fisslock decider keeps ${switchLocks} locks; the clients send ids up to ${clientSplit - 1} to it (run with --opt switchCapacity=${switchLocks}, or start the switch with a larger --switch.lock-count)`);
  }
  if (issues.length > 0) throw new ConfigError(issues);
}
