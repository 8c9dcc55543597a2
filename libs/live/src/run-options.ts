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

/** Splits a request's options into the protocol's and the host's own. */
export function hostRunOptions(options: Readonly<Record<string, string>>): { protocol: Record<string, string>; mutantLocalVerbs: boolean } {
  const { [MUTANT_LOCAL_VERBS_OPTION]: mutant, ...protocol } = options;
  return { protocol, mutantLocalVerbs: mutant === 'true' };
}
