import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import forge from 'node-forge';
import { identityUri } from '@lockfabric/live';
import type { ServiceIdentity, TlsFiles, TlsMaterial } from '@lockfabric/live';

/**
 * A cluster's own certificate authority and the certificates it issues (decision record 0007):
 * node:crypto makes the RSA keys, node-forge builds and signs the X.509 certificates (node:crypto
 * cannot). One CA per `cluster up`, kept in <cluster dir>/tls; its key never leaves that folder.
 */
export interface ClusterCa {
  readonly dir: string;
  readonly cert: forge.pki.Certificate;
  readonly key: forge.pki.rsa.PrivateKey;
}

const VALID_DAYS = 30;

function rsaKeyPair(): { publicKey: forge.pki.rsa.PublicKey; privateKey: forge.pki.rsa.PrivateKey; pem: string } {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pem = privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
  const key = forge.pki.privateKeyFromPem(pem) as forge.pki.rsa.PrivateKey;
  return { privateKey: key, publicKey: forge.pki.setRsaPublicKey(key.n, key.e), pem };
}

function serial(): string {
  // Positive (high bit clear) and unique per certificate.
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0] ?? 0) & 0x7f;
  return bytes.toString('hex');
}

function validity(cert: forge.pki.Certificate, days: number): void {
  const now = Date.now();
  cert.validity.notBefore = new Date(now - 60_000); // tolerate small clock differences between processes
  cert.validity.notAfter = new Date(now + days * 86_400_000);
}

function writePrivate(path: string, text: string): void {
  writeFileSync(path, text, { mode: 0o600 });
  chmodSync(path, 0o600);
}

/** Creates a new CA in `dir` (ca.crt, ca.key). */
export function createClusterCa(dir: string, cluster: string): ClusterCa {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const keys = rsaKeyPair();
  const cert = forge.pki.createCertificate();
  cert.serialNumber = serial();
  cert.publicKey = keys.publicKey;
  validity(cert, VALID_DAYS);
  const name = [{ name: 'commonName', value: `lockfabric ${cluster} CA` }];
  cert.setSubject(name);
  cert.setIssuer(name);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  cert.sign(keys.privateKey, forge.md.sha256.create());
  writeFileSync(join(dir, 'ca.crt'), forge.pki.certificateToPem(cert));
  writePrivate(join(dir, 'ca.key'), keys.pem);
  return { dir, cert, key: keys.privateKey };
}

/** The files of the certificate issued to `name` in the CA's folder. */
export function certificateFiles(dir: string, name: string): TlsFiles {
  return { ca: join(dir, 'ca.crt'), cert: join(dir, `${name}.crt`), key: join(dir, `${name}.key`) };
}

/**
 * Issues a certificate for `identity`, usable as server and client (every service is both),
 * with the identity as its only URI SAN and localhost names for local clusters.
 */
export function issueCertificate(ca: ClusterCa, name: string, identity: ServiceIdentity): TlsFiles {
  return issue(ca, name, { commonName: `${identity.role}/${identity.node}`, unit: identity.role }, [
    { type: 6, value: identityUri(identity) },
    { type: 2, value: 'localhost' },
    { type: 7, ip: '127.0.0.1' },
  ]);
}

/** DNS names the NATS server certificate covers beside localhost/127.0.0.1: its compose and Kubernetes names (dev and bench namespaces). */
export const NATS_SERVER_HOSTS = [
  'nats',
  'nats-0.nats',
  ...['lockfabric-dev', 'lockfabric-bench'].flatMap((ns) => [`nats.${ns}.svc`, `nats-0.nats.${ns}.svc`, `nats-0.nats.${ns}.svc.cluster.local`]),
] as const;

/**
 * Issues the NATS server's certificate: no service identity (clients only verify the
 * server, by host name), valid for loopback and `hosts`.
 */
export function issueNatsServerCertificate(ca: ClusterCa, name: string, hosts: readonly string[] = NATS_SERVER_HOSTS): TlsFiles {
  return issue(ca, name, { commonName: 'nats', unit: 'nats' }, [
    { type: 2, value: 'localhost' },
    ...hosts.map((value) => ({ type: 2, value })),
    { type: 7, ip: '127.0.0.1' },
  ]);
}

function issue(ca: ClusterCa, name: string, subject: { commonName: string; unit: string }, altNames: object[]): TlsFiles {
  const keys = rsaKeyPair();
  const cert = forge.pki.createCertificate();
  cert.serialNumber = serial();
  cert.publicKey = keys.publicKey;
  validity(cert, VALID_DAYS);
  cert.setSubject([
    { name: 'commonName', value: subject.commonName },
    { name: 'organizationalUnitName', value: subject.unit },
  ]);
  cert.setIssuer(ca.cert.subject.attributes);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false, critical: true },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true, clientAuth: true },
    { name: 'subjectAltName', altNames },
  ]);
  cert.sign(ca.key, forge.md.sha256.create());
  const files = certificateFiles(ca.dir, name);
  writeFileSync(files.cert, forge.pki.certificateToPem(cert));
  writePrivate(files.key, keys.pem);
  return files;
}

export function readMaterial(files: TlsFiles): TlsMaterial {
  return { ca: readFileSync(files.ca), cert: readFileSync(files.cert), key: readFileSync(files.key) };
}

/** The operator certificate `cluster up` leaves for the CLI, if this cluster has TLS. */
export function operatorFiles(clusterDir: string): TlsFiles | undefined {
  const files = certificateFiles(join(clusterDir, 'tls'), 'operator');
  return existsSync(files.cert) && existsSync(files.key) && existsSync(files.ca) ? files : undefined;
}
