import { ConfigError } from '@lockfabric/ports';

/**
 * Reserved keys of a RunRequest's options that tell the host how to run the clients, not the
 * protocol what to do. A host strips them before the protocol sees its options.
 */

/**
 * Test-only: a memory node's clients get no CPU access to its memory, so every client beside the
 * table takes the remote path and issues verbs. It exists to show that the zero-verb check on
 * local clients (ALock §3–4) can fail.
 */
export const MUTANT_LOCAL_VERBS_OPTION = 'lockfabric.mutantLocalVerbs';

/**
 * Test-only: a compute node leaves the previous run's clients' verbs open when it prepares a new
 * run, as before leftovers of a run were fenced (they then act on the new run's locks).
 */
export const MUTANT_KEEP_OLD_RUN_VERBS_OPTION = 'lockfabric.mutantKeepOldRunVerbs';

/** A client skips a release with this probability and carries on (ShiftLock Fig. 13, DSLR Figs. 17–18). */
export const SKIP_RELEASE_OPTION = 'lockfabric.skipReleaseProbability';

export interface HostRunOptions {
  readonly protocol: Record<string, string>;
  readonly mutantLocalVerbs: boolean;
  readonly mutantKeepOldRunVerbs: boolean;
  readonly skipReleaseProbability: number;
}

/** Splits a request's options into the protocol's and the host's own; a bad value throws ConfigError. */
export function hostRunOptions(options: Readonly<Record<string, string>>): HostRunOptions {
  const { [MUTANT_LOCAL_VERBS_OPTION]: mutant, [MUTANT_KEEP_OLD_RUN_VERBS_OPTION]: keepOld, [SKIP_RELEASE_OPTION]: skip, ...protocol } = options;
  const skipReleaseProbability = skip === undefined ? 0 : skip.trim() === '' ? NaN : Number(skip);
  if (!(skipReleaseProbability >= 0 && skipReleaseProbability <= 1)) throw new ConfigError([`option ${SKIP_RELEASE_OPTION}: expected a probability in [0, 1], got ${JSON.stringify(skip)}`]);
  return { protocol, mutantLocalVerbs: mutant === 'true', mutantKeepOldRunVerbs: keepOld === 'true', skipReleaseProbability };
}
