import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ServerCredentials, credentials, experimental } from '@grpc/grpc-js';
import type { ChannelCredentials } from '@grpc/grpc-js';
import { ConfigError } from '@lockfabric/ports';

/** PEM files of one process: the cluster CA, its own certificate and key. */
export interface TlsFiles {
  readonly ca: string;
  readonly cert: string;
  readonly key: string;
}

export interface TlsMaterial {
  readonly ca: Buffer;
  readonly cert: Buffer;
  readonly key: Buffer;
}

/** Where a certificate Secret is mounted: the names cert-manager and `kubernetes.io/tls` use. */
export const DEFAULT_TLS_DIR = '/etc/lockfabric/tls';
export function tlsFilesIn(dir: string): TlsFiles {
  return { ca: join(dir, 'ca.crt'), cert: join(dir, 'tls.crt'), key: join(dir, 'tls.key') };
}

/** Reads the three files; every unreadable one is listed in one ConfigError. */
export function loadTlsMaterial(files: TlsFiles): TlsMaterial {
  const problems: string[] = [];
  const read = (what: string, path: string): Buffer => {
    try {
      const bytes = readFileSync(path);
      if (!bytes.toString('latin1').includes('-----BEGIN ')) problems.push(`tls.${what}: ${path} is not a PEM file`);
      return bytes;
    } catch (error) {
      problems.push(`tls.${what}: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
      return Buffer.alloc(0);
    }
  };
  const material = { ca: read('ca', files.ca), cert: read('cert', files.cert), key: read('key', files.key) };
  if (problems.length > 0) throw new ConfigError([...problems, 'give the files (tls.dir or tls.ca/cert/key) or set tls.mode=insecure']);
  return material;
}

/**
 * A server that asks every client for a certificate but lets the TLS handshake finish without a
 * valid one, so the peer guard can refuse the call with UNAUTHENTICATED, count it and log it
 * (a handshake failure would be invisible to both sides' operators). Only a certificate the
 * cluster CA signed yields an identity (grpc-js reports none for an unverified peer).
 * grpc-js's createSsl cannot do this (it rejects in the handshake); its certificate-provider
 * credentials can.
 */
export function serverCredentialsFor(material: TlsMaterial | undefined): ServerCredentials {
  if (!material) return ServerCredentials.createInsecure();
  const provider = new StaticCertificates(material);
  // The same provider for both roles: grpc-js 1.14 swaps the two arguments internally.
  return experimental.createCertificateProviderServerCredentials(provider, provider, false);
}

/**
 * The process's files, read once: handed to grpc-js's certificate-provider credentials. Updates
 * are delivered on the next microtask: grpc-js registers the server's watcher only after asking
 * for them, and a synchronous answer would leave the server without a certificate.
 */
class StaticCertificates implements experimental.CertificateProvider {
  constructor(private readonly material: TlsMaterial) {}
  addCaCertificateListener(listener: experimental.CaCertificateUpdateListener): void {
    queueMicrotask(() => listener({ caCertificate: this.material.ca }));
  }
  removeCaCertificateListener(): void {}
  addIdentityCertificateListener(listener: experimental.IdentityCertificateUpdateListener): void {
    queueMicrotask(() => listener({ certificate: this.material.cert, privateKey: this.material.key }));
  }
  removeIdentityCertificateListener(): void {}
}

/**
 * A client that presents its certificate and accepts a server whose certificate the cluster CA
 * signed. Host names are not checked: peers are dialled by IP, relay port or Service name, and
 * the identity that matters is the SAN URI the CA put in (decision record 0007).
 */
export function channelCredentialsFor(material: TlsMaterial | undefined): ChannelCredentials {
  if (!material) return credentials.createInsecure();
  return credentials.createSsl(material.ca, material.key, material.cert, { checkServerIdentity: () => undefined });
}
