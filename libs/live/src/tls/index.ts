export { ACCESS_POLICY, DESCRIPTOR_ACCESS_POLICY, ruleFor, type MethodRule } from './access-policy.js';
export { DEFAULT_TLS_DIR, channelCredentialsFor, loadTlsMaterial, serverCredentialsFor, tlsFilesIn, type TlsFiles, type TlsMaterial } from './credentials.js';
export { IDENTITY_SCHEME, SERVICE_ROLES, describeIdentity, identityFromSubjectAltName, identityUri, parseIdentityUri, type ServiceIdentity, type ServiceRole } from './identity.js';
export { PeerGuard, decide, type Decision, type PeerGuardOptions, type RefusalReason } from './peer-guard.js';
export { TLS_SERVER_NAME, clientChannelOptions, clientCredentials, configureProcessTls, guardedServer, processPeerGuard, processTlsOn, tlsChannelOptions } from './process-tls.js';
export { assertTransportSecurityMatches, probeTls, type TlsProbeOutcome } from './tls-probe.js';
