import { NS_PER_MS } from '@lockfabric/ports';
import type { NodeId } from '@lockfabric/ports';

export type MemberState = 'alive' | 'suspect' | 'dead';

/** What the detector needs from one decoded heartbeat. */
export interface HeartbeatInput {
  readonly role: string;
  readonly id: string;
  readonly node: NodeId;
  readonly incarnation: bigint;
  readonly seq: bigint;
  readonly ready: boolean;
}

export interface MemberRecord {
  readonly role: string;
  readonly id: string;
  readonly node: NodeId;
  readonly incarnation: bigint;
  readonly state: MemberState;
  /** When the coordinator last accepted a heartbeat of this incarnation (its clock). */
  readonly lastHeartbeatNs: number;
  readonly lastSeq: bigint;
  readonly ready: boolean;
  /** When the member entered its current state. */
  readonly sinceNs: number;
}

/**
 * What one heartbeat did:
 * - `joined`: first heartbeat of an instance the detector did not know, or had only recalled;
 * - `alive`: the next heartbeat of a live member;
 * - `refuted`: a suspect member heartbeated in time and is alive again;
 * - `restarted`: a live member came back with a higher incarnation before it was declared dead;
 * - `rejoined`: a dead member came back with a higher incarnation;
 * - `fenced`: a dead member's old incarnation still heartbeats (it was paused, not restarted): ignored;
 * - `stale`: a lower incarnation than the one known: ignored;
 * - `table-full`: a new instance while the table is full of live members: ignored;
 * - `identified`: the first heartbeat of an expected member declared dead before it was ever heard:
 *   its incarnation is now the one declared dead (fenced), so the node rejoins under a new one.
 */
export type HeartbeatOutcome = 'joined' | 'alive' | 'refuted' | 'restarted' | 'rejoined' | 'fenced' | 'stale' | 'table-full' | 'identified';

/** A member of a view an earlier life of the coordinator published, as a restarted one learns it back. */
export interface RecalledMember {
  readonly role: string;
  readonly id: string;
  readonly node: NodeId;
  readonly incarnation: bigint;
  readonly state: MemberState;
}

/** A member the deployment's configuration names (a compute node of the cluster), before any heartbeat of it. */
export interface ExpectedMember {
  readonly role: string;
  readonly id: string;
  readonly node: NodeId;
}

/** The incarnation an expected member is listed under until one of its heartbeats names its own. */
export const UNHEARD_INCARNATION = 0n;

export interface Transition {
  readonly role: string;
  readonly id: string;
  readonly from: MemberState;
  readonly to: MemberState;
  readonly atNs: number;
}

export interface FailureDetectorOptions {
  readonly heartbeatIntervalMs: number;
  /** A member is suspected after this many intervals without a heartbeat. */
  readonly missesBeforeSuspect: number;
  /**
   * How long suspicion lasts before the member is declared dead. 0 (the default) declares it
   * dead on suspicion; a later design may spend this time on indirect probes.
   */
  readonly confirmAfterMs?: number;
  /** Members remembered at most; the longest-dead ones are forgotten first. */
  readonly maxMembers?: number;
}

export const DEFAULT_MAX_MEMBERS = 4_096;

interface Entry {
  role: string;
  id: string;
  node: NodeId;
  incarnation: bigint;
  state: MemberState;
  lastHeartbeatNs: number;
  lastSeq: bigint;
  ready: boolean;
  sinceNs: number;
}

/**
 * Heartbeat failure detection as a state machine over an injected time (every method takes
 * `nowNs`), so it is tested without timers:
 *
 *   (unknown) --hb--> alive --k intervals silent--> suspect --confirmAfter--> dead
 *   suspect --hb, same incarnation--> alive            dead --hb, higher incarnation--> alive
 *   alive/suspect --hb, higher incarnation--> alive (a restart; the old incarnation is gone)
 *   (recalled alive after a coordinator restart) = alive, silent since the restart
 *   (expected by configuration, never heard) = alive under UNHEARD_INCARNATION, silent since the start
 *   dead, never heard --hb--> dead under the incarnation it names (`identified`)
 *
 * The live set is the members that are not dead, each with its incarnation; `liveSetVersion`
 * grows whenever it changes, which is when the coordinator must publish a new view.
 */
export class FailureDetector {
  private readonly entries = new Map<string, Entry>();
  /** Recalled and expected members not heard since (see `recall`, `expect`). */
  private readonly unheard = new Set<string>();
  /** Expected members whose incarnation no heartbeat has named yet (listed as UNHEARD_INCARNATION). */
  private readonly unnamed = new Set<string>();
  private readonly suspectAfterNs: number;
  private readonly confirmAfterNs: number;
  private readonly maxMembers: number;
  private version = 0;
  private silenceExcusedUntilNs = Number.NEGATIVE_INFINITY;

  constructor(options: FailureDetectorOptions) {
    if (!(options.heartbeatIntervalMs > 0)) throw new RangeError(`heartbeatIntervalMs must be positive, got ${options.heartbeatIntervalMs}`);
    if (!Number.isSafeInteger(options.missesBeforeSuspect) || options.missesBeforeSuspect < 1) {
      throw new RangeError(`missesBeforeSuspect must be a positive integer, got ${options.missesBeforeSuspect}`);
    }
    this.suspectAfterNs = options.heartbeatIntervalMs * options.missesBeforeSuspect * NS_PER_MS;
    this.confirmAfterNs = (options.confirmAfterMs ?? 0) * NS_PER_MS;
    this.maxMembers = options.maxMembers ?? DEFAULT_MAX_MEMBERS;
  }

  /** Silence after which a member is suspected. */
  get suspectAfterMs(): number {
    return this.suspectAfterNs / NS_PER_MS;
  }

  get liveSetVersion(): number {
    return this.version;
  }

  heartbeat(hb: HeartbeatInput, nowNs: number): HeartbeatOutcome {
    const key = memberKey(hb.role, hb.id);
    const entry = this.entries.get(key);
    if (entry === undefined) {
      if (this.entries.size >= this.maxMembers && !this.forgetLongestDead()) return 'table-full';
      this.entries.set(key, { role: hb.role, id: hb.id, node: hb.node, incarnation: hb.incarnation, state: 'alive', lastHeartbeatNs: nowNs, lastSeq: hb.seq, ready: hb.ready, sinceNs: nowNs });
      this.version++;
      return 'joined';
    }
    if (this.unnamed.delete(key)) return this.name(entry, hb, nowNs);
    if (hb.incarnation < entry.incarnation) return 'stale';
    if (hb.incarnation === entry.incarnation) {
      if (entry.state === 'dead') return 'fenced';
      const outcome = this.unheard.delete(key) ? 'joined' : entry.state === 'suspect' ? 'refuted' : 'alive';
      if (entry.state === 'suspect') this.enter(entry, 'alive', nowNs);
      this.refresh(entry, hb, nowNs);
      return outcome;
    }
    // A higher incarnation: the instance restarted and lost its state, whatever we thought of it.
    this.unheard.delete(key);
    const outcome = entry.state === 'dead' ? 'rejoined' : 'restarted';
    entry.incarnation = hb.incarnation;
    entry.lastSeq = hb.seq;
    this.enter(entry, 'alive', nowNs);
    this.refresh(entry, hb, nowNs);
    this.version++;
    return outcome;
  }

  /**
   * Members an earlier life of the coordinator published (a participant's newest view), for a
   * restarted coordinator: each one not known here is taken as listed, its silence counted from
   * `sinceNs` (the restart). A member that died while no coordinator ran is then suspected one
   * timeout after the restart, where without this it would count as one that never joined; one
   * listed dead stays dead, so its old incarnation stays fenced. Members already heard (or already
   * declared dead) keep their entry; an expected one still unheard takes the recalled one. Returns
   * how many were taken.
   */
  recall(members: readonly RecalledMember[], sinceNs: number): number {
    let taken = 0;
    for (const m of members) {
      const key = memberKey(m.role, m.id);
      const known = this.entries.get(key);
      // an expected member not yet heard is known by name only: the recalled view says more
      if (known && !(this.unnamed.has(key) && known.state === 'alive')) continue;
      if (!known && this.entries.size >= this.maxMembers && !this.forgetLongestDead()) break;
      // listed before any heartbeat named it (an expected member): the first one heard still names it
      if (m.incarnation === UNHEARD_INCARNATION) this.unnamed.add(key);
      else this.unnamed.delete(key);
      const state = m.state === 'dead' ? 'dead' : 'alive';
      this.entries.set(key, { role: m.role, id: m.id, node: m.node, incarnation: m.incarnation, state, lastHeartbeatNs: sinceNs, lastSeq: 0n, ready: false, sinceNs });
      if (state === 'alive') this.unheard.add(key);
      taken++;
    }
    if (taken > 0) this.version++;
    return taken;
  }

  /**
   * Members the deployment expects (its configured compute nodes), for a coordinator that has
   * heard none of them yet: each one not known is taken as alive under UNHEARD_INCARNATION, silent
   * since `sinceNs` (the start), as a recalled member is. One that never heartbeats is then
   * declared dead one timeout after the start, where it would otherwise never have joined (a node
   * that died before any view listed it, while no coordinator ran). A recalled view names the
   * incarnation and replaces the entry. Returns how many were taken.
   */
  expect(members: readonly ExpectedMember[], sinceNs: number): number {
    let taken = 0;
    for (const m of members) {
      const key = memberKey(m.role, m.id);
      if (this.entries.has(key)) continue;
      if (this.entries.size >= this.maxMembers && !this.forgetLongestDead()) break;
      this.entries.set(key, { ...m, incarnation: UNHEARD_INCARNATION, state: 'alive', lastHeartbeatNs: sinceNs, lastSeq: 0n, ready: false, sinceNs });
      this.unheard.add(key);
      this.unnamed.add(key);
      taken++;
    }
    if (taken > 0) this.version++;
    return taken;
  }

  /**
   * Silence before `untilNs` counts for nobody: the coordinator itself could not hear (its NATS
   * connection was down), so it cannot accuse anyone of not speaking. Suspicion counts from the
   * later of a member's last heartbeat and this time. `Infinity` holds detection off entirely.
   */
  excuseSilenceUntil(untilNs: number): void {
    this.silenceExcusedUntilNs = untilNs;
  }

  /** Applies the timeouts due at `nowNs`; returns the state changes, in order. */
  tick(nowNs: number): Transition[] {
    const transitions: Transition[] = [];
    for (const entry of this.entries.values()) {
      if (entry.state === 'alive' && nowNs - Math.max(entry.lastHeartbeatNs, this.silenceExcusedUntilNs) >= this.suspectAfterNs) {
        transitions.push(this.enter(entry, 'suspect', nowNs));
      }
      if (entry.state === 'suspect' && nowNs - entry.sinceNs >= this.confirmAfterNs) {
        transitions.push(this.enter(entry, 'dead', nowNs));
        this.version++;
      }
    }
    return transitions;
  }

  /**
   * Declares a member dead without waiting for its silence: it is alive by its heartbeats but
   * cannot take part in a recovery (it does not answer the coordinator's calls). Its incarnation
   * is fenced like any dead one's. Returns the transition, or undefined if it is unknown or dead.
   */
  declareDead(role: string, id: string, nowNs: number): Transition | undefined {
    const entry = this.entries.get(memberKey(role, id));
    if (!entry || entry.state === 'dead') return undefined;
    const transition = this.enter(entry, 'dead', nowNs);
    this.version++;
    return transition;
  }

  members(): MemberRecord[] {
    return [...this.entries.values()].map((entry) => ({ ...entry }));
  }

  member(role: string, id: string): MemberRecord | undefined {
    const entry = this.entries.get(memberKey(role, id));
    return entry && { ...entry };
  }

  /**
   * The first heartbeat of an expected member: alive, it joins under the incarnation it names;
   * declared dead while unheard, that incarnation is the one declared (a process that was running
   * all along, or one started since: the coordinator cannot tell), so it stays dead and fenced.
   */
  private name(entry: Entry, hb: HeartbeatInput, nowNs: number): HeartbeatOutcome {
    entry.incarnation = hb.incarnation;
    entry.lastSeq = hb.seq;
    this.version++;
    if (entry.state === 'dead') return 'identified';
    this.unheard.delete(memberKey(entry.role, entry.id));
    if (entry.state === 'suspect') this.enter(entry, 'alive', nowNs);
    this.refresh(entry, hb, nowNs);
    return 'joined';
  }

  private refresh(entry: Entry, hb: HeartbeatInput, nowNs: number): void {
    entry.node = hb.node;
    entry.ready = hb.ready;
    entry.lastHeartbeatNs = nowNs;
    if (hb.seq > entry.lastSeq) entry.lastSeq = hb.seq;
  }

  private enter(entry: Entry, state: MemberState, nowNs: number): Transition {
    const transition = { role: entry.role, id: entry.id, from: entry.state, to: state, atNs: nowNs };
    if (state === 'dead') this.unheard.delete(memberKey(entry.role, entry.id));
    entry.state = state;
    entry.sinceNs = nowNs;
    return transition;
  }

  private forgetLongestDead(): boolean {
    let oldest: [string, Entry] | undefined;
    for (const pair of this.entries) if (pair[1].state === 'dead' && (!oldest || pair[1].sinceNs < oldest[1].sinceNs)) oldest = pair;
    if (!oldest) return false;
    this.entries.delete(oldest[0]);
    this.unheard.delete(oldest[0]);
    this.unnamed.delete(oldest[0]);
    return true;
  }
}

/** Roles and ids are NATS subject tokens, so '/' cannot occur in either. */
function memberKey(role: string, id: string): string {
  return `${role}/${id}`;
}
