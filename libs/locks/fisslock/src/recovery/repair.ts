import type { LockId, NodeId } from '@lockfabric/ports';
import { requestId } from './recovery-state.js';
import type {
  AbortOrder,
  AgentRecord,
  ClientRecord,
  MachineOrders,
  QueuedRequest,
  RepairInput,
  RepairPlan,
  RepairedAgent,
  RequestRef,
  TaskOrder,
} from './recovery-state.js';

export interface RepairOptions {
  /** Test-only mutant: skip step 1, so participants on failed machines stay in holders and queues. */
  readonly mutantKeepFailedParticipants?: boolean;
}

/**
 * S2 (spec §7.2 steps 1–6) as a function over the S1 reports. For every lock that has an agent or
 * any client record on a survivor:
 * 1. participants on failed machines leave holders and wait queues;
 * 2. the holders are the surviving clients that hold the lock, plus agent holders whose client is
 *    still pending (their GRANT was lost or is in flight: woken); agent holders the client knows
 *    nothing of (or gave up on) are dropped;
 * 3. waiters keep the agent's queue order, then the surviving pending requests the agent never
 *    saw, by start time;
 * 4. the agent stays on a surviving machine that had it live, else it is rebuilt on the first
 *    holder's machine (after step 5: the granted head's);
 * 5. with no holders left, the head waiter (and the shared run behind a shared head) is granted;
 *    with neither holders nor waiters the lock is free and has no agent;
 * 6. every agent restarts at incarnation 0.
 */
export function repairLockState(input: RepairInput, options: RepairOptions = {}): RepairPlan {
  const failed = new Set(input.failed);
  const survivors = new Set(input.reports.map((r) => r.machine).filter((m) => !failed.has(m)));
  const alive = (r: RequestRef): boolean => options.mutantKeepFailedParticipants === true || survivors.has(r.mid);

  const clients = new Map<number, ClientRecord>();
  const clientsByLock = new Map<LockId, ClientRecord[]>();
  const agentsByLock = new Map<LockId, AgentRecord[]>();
  for (const report of input.reports) {
    if (!survivors.has(report.machine)) continue;
    for (const record of report.clients) {
      clients.set(requestId(record), record);
      push(clientsByLock, record.lid, record);
    }
    for (const agent of report.agents) push(agentsByLock, agent.lid, agent);
  }

  const agents: RepairedAgent[] = [];
  const wake: TaskOrder[] = [];
  const abort: AbortOrder[] = [];
  const locks = [...new Set([...agentsByLock.keys(), ...clientsByLock.keys()])].sort((a, b) => a - b);

  for (const lid of locks) {
    // a live agent is authoritative over a pending copy left behind by an unconfirmed hand-over
    const found = agentsByLock.get(lid) ?? [];
    if (found.length > 1) found.sort((a, b) => rank(a) - rank(b));
    const base = found[0];
    const records = clientsByLock.get(lid) ?? [];

    // step 1 (participants per lock are few: plain arrays and linear lookups beat sets here)
    const agentHolders = (found.length === 1 ? (base as AgentRecord).holders : unique(found.flatMap((a) => a.holders))).filter(alive);
    const agentQueue = (found.length === 1 ? (base as AgentRecord).wqueue : unique(found.flatMap((a) => a.wqueue))).filter(alive);

    // step 2
    const holders: QueuedRequest[] = [];
    const addHolder = (r: QueuedRequest): void => {
      if (!holders.some((h) => same(h, r))) holders.push({ mid: r.mid, task: r.task, mode: r.mode });
    };
    for (const record of records) if (record.state === 'granted') addHolder(record);
    for (const h of agentHolders) {
      const record = clients.get(requestId(h));
      if (record?.state === 'pending' && record.lid === lid) {
        addHolder(record);
        wake.push({ lid, mid: record.mid, task: record.task, mode: record.mode });
      } else if (record === undefined && options.mutantKeepFailedParticipants === true && !survivors.has(h.mid)) {
        addHolder({ ...h, mode: base?.mode ?? 'exclusive' });
      }
    }

    // step 3
    const waiters: QueuedRequest[] = [];
    const addWaiter = (r: QueuedRequest): void => {
      if (!holders.some((h) => same(h, r)) && !waiters.some((w) => same(w, r))) waiters.push({ mid: r.mid, task: r.task, mode: r.mode });
    };
    for (const w of agentQueue) {
      const record = clients.get(requestId(w));
      if (record?.state === 'pending' && record.lid === lid) addWaiter(w);
      else if (record === undefined && options.mutantKeepFailedParticipants === true && !survivors.has(w.mid)) addWaiter(w);
    }
    const unseen = records.filter((r) => r.state === 'pending');
    if (unseen.length > 1) unseen.sort((a, b) => a.startNs - b.startNs || a.mid - b.mid || a.task - b.task);
    for (const record of unseen) addWaiter(record);
    for (const record of records) {
      if (record.state === 'aborting') abort.push({ lid, mid: record.mid, task: record.task, reason: 'request given up before recovery' });
    }

    // step 5
    let grantedHead = false;
    if (holders.length === 0 && waiters.length > 0) {
      const head = waiters.shift() as QueuedRequest;
      const granted = [head];
      if (head.mode === 'shared') while (waiters[0]?.mode === 'shared') granted.push(waiters.shift() as QueuedRequest);
      for (const g of granted) {
        addHolder(g);
        wake.push({ lid, ...g });
      }
      grantedHead = true;
    }
    if (holders.length === 0) continue; // free: no agent, the switch writes it free

    // step 4
    const keep = !grantedHead && base !== undefined && base.state === 'live' && survivors.has(base.machine);
    const machine = keep ? (base as AgentRecord).machine : (holders[0] as QueuedRequest).mid;
    const mode = holders.some((h) => h.mode === 'exclusive') ? 'exclusive' : 'shared';
    // step 6
    agents.push({ lid, machine, mode, holders, wqueue: waiters, inca: 0 });
  }
  return { survivors: [...survivors].sort((a, b) => a - b), failed: [...failed].sort((a, b) => a - b), agents, wake, abort };
}

/** Splits a plan into what each surviving machine applies. */
export function ordersFor(plan: RepairPlan, machine: NodeId): MachineOrders {
  return {
    machine,
    agents: plan.agents.filter((a) => a.machine === machine),
    wake: plan.wake.filter((w) => w.mid === machine),
    abort: plan.abort.filter((a) => a.mid === machine),
  };
}

function same(a: RequestRef, b: RequestRef): boolean {
  return a.mid === b.mid && a.task === b.task;
}

function rank(a: AgentRecord): number {
  return a.state === 'live' ? 0 : 1;
}

function unique<T extends RequestRef>(items: readonly T[]): T[] {
  const seen = new Set<number>();
  return items.filter((r) => {
    const k = requestId(r);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}
