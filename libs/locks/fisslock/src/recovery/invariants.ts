import type { NodeId } from '@lockfabric/ports';
import { requestId, requestKey } from './recovery-state.js';
import type { RepairInput, RepairPlan } from './recovery-state.js';
import type { HeldLockImage, SwitchImage } from './switch-image.js';

/**
 * What must hold after S2/S3 (spec §7.2, §9, §11 "recovery tests"); returns every violation found.
 * - one agent per lock, incarnation 0, on a surviving machine, with at least one holder;
 * - reader–writer exclusion among its holders, and the agent's mode matches them;
 * - no holder or waiter on a failed machine;
 * - every surviving client that holds a lock is a holder in that lock's agent, and every holder is
 *   a surviving request; every surviving pending request is a holder (woken) or a waiter;
 * - with `image`: the decider's registers equal the agents (Lemma 1): held exactly where an agent
 *   is, with its mode and machine.
 */
export function checkRepairPlan(input: RepairInput, plan: RepairPlan, image?: SwitchImage): string[] {
  const problems: string[] = [];
  const failed = new Set<NodeId>(input.failed);
  const survivors = new Set(plan.survivors);
  const agentOf = new Map<number, (typeof plan.agents)[number]>();
  for (const a of plan.agents) {
    if (agentOf.has(a.lid)) problems.push(`lock ${a.lid}: more than one agent`);
    agentOf.set(a.lid, a);
    if (a.inca !== 0) problems.push(`lock ${a.lid}: agent incarnation ${a.inca}, not 0`);
    if (!survivors.has(a.machine) || failed.has(a.machine)) problems.push(`lock ${a.lid}: agent on machine ${a.machine}, which did not survive`);
    if (a.holders.length === 0) problems.push(`lock ${a.lid}: agent without holders`);
    if (a.mode === 'exclusive' && a.holders.length > 1) problems.push(`lock ${a.lid}: exclusive with ${a.holders.length} holders`);
    if (a.holders.some((h) => h.mode !== a.mode)) problems.push(`lock ${a.lid}: a holder's mode differs from the agent's ${a.mode}`);
    for (const p of [...a.holders, ...a.wqueue]) {
      if (failed.has(p.mid) || !survivors.has(p.mid)) problems.push(`lock ${a.lid}: participant ${requestKey(p)} is on failed machine ${p.mid}`);
    }
  }
  const holderKeys = new Map<number, Set<number>>(plan.agents.map((a) => [a.lid, new Set(a.holders.map(requestId))]));
  const waiterKeys = new Map<number, Set<number>>(plan.agents.map((a) => [a.lid, new Set(a.wqueue.map(requestId))]));
  const known = new Map<number, Set<number>>();
  for (const report of input.reports) {
    if (!survivors.has(report.machine)) continue;
    for (const c of report.clients) {
      let ids = known.get(c.lid);
      if (!ids) known.set(c.lid, (ids = new Set()));
      ids.add(requestId(c));
      const holds = holderKeys.get(c.lid)?.has(requestId(c)) === true;
      if (c.state === 'granted' && !holds) problems.push(`lock ${c.lid}: surviving holder ${requestKey(c)} is not in the agent`);
      if (c.state === 'pending' && !holds && waiterKeys.get(c.lid)?.has(requestId(c)) !== true) problems.push(`lock ${c.lid}: pending request ${requestKey(c)} was lost`);
    }
  }
  for (const a of plan.agents) for (const h of a.holders) if (known.get(a.lid)?.has(requestId(h)) !== true) problems.push(`lock ${a.lid}: holder ${requestKey(h)} is no surviving request`);
  if (image) {
    const byLid = new Map<number, HeldLockImage>(image.held.map((h) => [h.lid, h]));
    if (byLid.size !== image.held.length) problems.push('switch image: a lock written twice');
    for (const a of plan.agents) {
      const h = byLid.get(a.lid);
      if (!h) problems.push(`lock ${a.lid}: held by an agent but written free`);
      else if (h.mode !== a.mode || h.mid !== a.machine) problems.push(`lock ${a.lid}: switch says ${h.mode}@${h.mid}, agent ${a.mode}@${a.machine}`);
    }
    for (const h of image.held) if (!agentOf.has(h.lid)) problems.push(`lock ${h.lid}: written held without an agent`);
  }
  return problems;
}
