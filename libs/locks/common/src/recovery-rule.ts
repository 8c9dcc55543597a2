/**
 * How the locks a failed member held become usable again (README, "Recovery per protocol"). Each
 * protocol declares its own in its definition (`ProtocolDefinition.recovery`); the coordinator's
 * recovery book keeps one action per rule. For lease-based recovery the protocol's own waiters do
 * the work, and the coordinator only knows by when it must be over.
 *
 * - `lease`: waiters reclaim the lock once the holder's lease (or stall threshold) has run out;
 *   the action is done at detection + `boundMs`.
 * - `await-restart`: nothing can be repaired until the member comes back (a memory node's table,
 *   a switch's registers); done when it rejoins with a higher incarnation.
 * - `fence`: the memory node fences the dead node (its verbs complete `bad-rkey`, "fenced: …")
 *   and only then frees the words it held; done when a memory node reports it on
 *   `ctl.recovery.phase` (normally within a few ms of detection).
 * - `driven`: the coordinator runs the protocol's recovery steps itself (a recovery driver its
 *   control package contributes); done when they end (or when it finds the protocol not in use).
 * - `none`: the design has no way to take a dead holder's lock back safely; the lock stays held
 *   until a reset between runs. Recorded so Status says so instead of pretending.
 */
export type RecoveryMechanism = 'lease' | 'await-restart' | 'fence' | 'driven' | 'none';

export interface RecoveryRule {
  readonly mechanism: RecoveryMechanism;
  /** For `lease`: the longest the protocol needs with its default options, in ms. */
  readonly boundMs?: number;
  /**
   * For `driven`: `queue-lock` when the steps are the control plane's own queue-lock recovery
   * (gate, drain, abort, reset over ctl.queue.<node>.<verb>), which serves every protocol that says
   * so here; such a protocol also hands its clients the node's queue-recovery group, which is what
   * makes a node answer the calls. Absent: the protocol's control package contributes the driver.
   */
  readonly driver?: 'queue-lock';
  readonly action: string;
}

/** What a protocol's locks need after the failure of a member of each role it depends on. */
export interface ProtocolRecovery {
  /** A compute node (lock clients, node services) died. */
  readonly compute: RecoveryRule;
  /** The switch restarted (protocols that keep lock state in it). Absent: nothing of it is lost. */
  readonly switch?: RecoveryRule;
}
