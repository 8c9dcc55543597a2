/** Clients known to have failed (crashed, killed, partitioned away), with the time of failure in ns. */
export type FailedClients = ReadonlyMap<string, number> | Readonly<Record<string, number>>;

/** Failure time of `client`, or undefined when it did not fail. */
export function failureTimeNs(failed: FailedClients | undefined, client: string): number | undefined {
  if (failed === undefined) return undefined;
  if (failed instanceof Map) return (failed as ReadonlyMap<string, number>).get(client);
  const record = failed as Readonly<Record<string, number>>;
  return Object.prototype.hasOwnProperty.call(record, client) ? record[client] : undefined;
}
