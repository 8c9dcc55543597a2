import type { LockPacket, NodeId } from '@lockfabric/ports';

export interface UnicastAction {
  readonly kind: 'unicast';
  readonly machine: NodeId;
  readonly packet: LockPacket;
}

/** One packet replicated to several machines (FissLock's DEST + DEST2 is a two-machine case). */
export interface MulticastAction {
  readonly kind: 'multicast';
  readonly machines: readonly NodeId[];
  readonly packet: LockPacket;
}

export interface DropAction {
  readonly kind: 'drop';
  /** Counted per reason by the switch; short kebab-case (`no-dst`, `stale-epoch`). */
  readonly reason: string;
}

/** Back to the machine the packet came in from. */
export interface BounceAction {
  readonly kind: 'bounce';
  readonly packet: LockPacket;
}

/** What a switch program does with a packet; a packet may cause several actions. */
export type EgressAction = UnicastAction | MulticastAction | DropAction | BounceAction;

export type EgressKind = EgressAction['kind'];

/** Resolves actions into one unicast copy per receiving machine: multicasts fan out, bounces go to `ingressMachine`, drops vanish. */
export function expandEgress(actions: readonly EgressAction[], ingressMachine: NodeId): UnicastAction[] {
  const copies: UnicastAction[] = [];
  for (const action of actions) {
    switch (action.kind) {
      case 'unicast':
        copies.push(action);
        break;
      case 'multicast':
        for (const machine of action.machines) copies.push({ kind: 'unicast', machine, packet: action.packet });
        break;
      case 'bounce':
        copies.push({ kind: 'unicast', machine: ingressMachine, packet: action.packet });
        break;
      case 'drop':
        break;
    }
  }
  return copies;
}

/** Why the switch cannot perform `action`, or undefined when it can. */
export function egressProblem(action: EgressAction): string | undefined {
  const isMachine = (m: unknown): boolean => Number.isSafeInteger(m) && (m as number) >= 0;
  switch (action.kind) {
    case 'unicast':
      return isMachine(action.machine) ? undefined : `unicast to ${String(action.machine)}, which is not a machine id`;
    case 'multicast':
      if (action.machines.length === 0) return 'multicast to no machines';
      return action.machines.every(isMachine) ? undefined : `multicast to [${action.machines.join(', ')}], not all machine ids`;
    case 'drop':
      return action.reason ? undefined : 'drop without a reason';
    case 'bounce':
      return undefined;
    default:
      return `unknown egress kind '${String((action as { kind: unknown }).kind)}'`;
  }
}
