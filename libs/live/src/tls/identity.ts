/**
 * Who a peer is, as its certificate says (decision record 0007): one SAN URI
 * `spiffe://lockfabric/<role>/<node>`. The CA vouches for it; nothing else in the handshake does.
 */
export const SERVICE_ROLES = ['memory-node', 'compute-node', 'coordinator', 'switch', 'driver', 'operator'] as const;
export type ServiceRole = (typeof SERVICE_ROLES)[number];

export interface ServiceIdentity {
  readonly role: ServiceRole;
  /** Node id, or a name for the driver and operators. */
  readonly node: string;
}

export const IDENTITY_SCHEME = 'spiffe://lockfabric/';
const NODE_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

export function identityUri(identity: ServiceIdentity): string {
  if (!SERVICE_ROLES.includes(identity.role)) throw new TypeError(`unknown service role ${identity.role}`);
  if (!NODE_NAME.test(identity.node)) throw new TypeError(`node name ${JSON.stringify(identity.node)} is not 1-64 letters, digits, '.', '-' or '_'`);
  return `${IDENTITY_SCHEME}${identity.role}/${identity.node}`;
}

export function parseIdentityUri(uri: string): ServiceIdentity | undefined {
  if (!uri.startsWith(IDENTITY_SCHEME)) return undefined;
  const [role, node, ...rest] = uri.slice(IDENTITY_SCHEME.length).split('/');
  if (rest.length > 0 || role === undefined || node === undefined) return undefined;
  if (!(SERVICE_ROLES as readonly string[]).includes(role) || !NODE_NAME.test(node)) return undefined;
  return { role: role as ServiceRole, node };
}

/**
 * The identity in a peer certificate's subjectAltName as Node's TLS reports it
 * (`URI:spiffe://lockfabric/compute-node/2, DNS:…`). More than one lockfabric URI is ambiguous
 * and yields none.
 */
export function identityFromSubjectAltName(subjectAltName: string | undefined): ServiceIdentity | undefined {
  if (!subjectAltName) return undefined;
  const found = subjectAltName
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry.startsWith(`URI:${IDENTITY_SCHEME}`))
    .map((entry) => parseIdentityUri(entry.slice('URI:'.length)));
  if (found.length !== 1) return undefined;
  return found[0];
}

export function describeIdentity(identity: ServiceIdentity): string {
  return `${identity.role}/${identity.node}`;
}
