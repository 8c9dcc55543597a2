import { describe, expect, it } from 'vitest';
import { identityFromSubjectAltName, identityUri, parseIdentityUri } from './identity.js';
import { decide } from './peer-guard.js';

describe('service identity in a certificate', () => {
  it('reads the one spiffe://lockfabric URI of a subjectAltName and round-trips it', () => {
    const uri = identityUri({ role: 'compute-node', node: '3' });
    expect(identityFromSubjectAltName(`DNS:localhost, URI:${uri}, IP Address:127.0.0.1`)).toEqual({ role: 'compute-node', node: '3' });
  });

  it('yields no identity for an unknown role, another trust domain, extra path segments, or two identities', () => {
    expect(parseIdentityUri('spiffe://lockfabric/root/1')).toBeUndefined();
    expect(parseIdentityUri('spiffe://example/operator/1')).toBeUndefined();
    expect(parseIdentityUri('spiffe://lockfabric/operator/1/x')).toBeUndefined();
    // Two identities are ambiguous: the mutant "take the first" would grant operator here.
    const two = `URI:spiffe://lockfabric/operator/a, URI:spiffe://lockfabric/compute-node/1`;
    expect(identityFromSubjectAltName(two)).toBeUndefined();
    const takeFirst = (san: string) => parseIdentityUri(san.split(',')[0]!.trim().slice(4));
    expect(takeFirst(two)).toEqual({ role: 'operator', node: 'a' });
  });

  it('refuses a method no rule names, even without TLS', () => {
    expect(decide('/lockfabric.v1.Unknown/Do', false, undefined)).toMatchObject({ allowed: false, reason: 'no-rule' });
    expect(decide('/lockfabric.v1.LockAdminService/ResetTable', false, undefined)).toMatchObject({ allowed: true });
  });
});
