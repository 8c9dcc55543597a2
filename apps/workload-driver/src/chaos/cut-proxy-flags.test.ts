import { ConfigError } from '@lockfabric/ports';
import { describe, expect, it } from 'vitest';
import { readCutProxyFlags } from './cut-proxy-flags.js';

function issuesOf(argv: readonly string[], readFile?: (path: string) => Buffer): readonly string[] {
  try {
    readCutProxyFlags(argv, readFile);
  } catch (error) {
    if (error instanceof ConfigError) return error.issues;
    throw error;
  }
  return [];
}

describe('cut proxy flags', () => {
  it('reads what `cluster up` writes', () => {
    const flags = readCutProxyFlags(['--dir=/tmp/c', '--control-port=4100', '--route=nats=nats:4222:4223', '--route=memory-0/grpc=memory-0:41000:41001']);
    expect(flags).toMatchObject({ dir: '/tmp/c', controlPort: 4100 });
    expect(flags.routes.map((r) => r.name)).toEqual(['nats', 'memory-0/grpc']);
    expect(flags.natsTls).toBeUndefined();
  });

  it('lists every problem at once, as a ConfigError (the process exits 2 with it)', () => {
    expect(issuesOf(['--control-port=abc', '--route=bad', '--route=also-bad', '--nats-tls-cert=c.pem'])).toEqual([
      '--dir (the cluster directory) is required',
      '--control-port: expected a port number',
      '--route: expected NAME=SERVER:LISTEN_PORT:UPSTREAM_PORT, got "bad"',
      '--route: expected NAME=SERVER:LISTEN_PORT:UPSTREAM_PORT, got "also-bad"',
      '--nats-tls-cert, --nats-tls-key and --nats-tls-ca go together',
    ]);
    // an unknown flag is a configuration problem too, not a stack trace
    expect(issuesOf(['--dir=/tmp/c', '--control-port=1', '--bogus'])).toHaveLength(1);
  });

  it('reads the three TLS files only when the flags are otherwise sound, and names a missing one', () => {
    const tls = ['--dir=/tmp/c', '--control-port=1', '--nats-tls-cert=c', '--nats-tls-key=k', '--nats-tls-ca=a'];
    const read: string[] = [];
    expect(readCutProxyFlags(tls, (p) => (read.push(p), Buffer.from(p))).natsTls).toBeDefined();
    expect(read).toEqual(['c', 'k', 'a']);
    expect(issuesOf(tls, () => { throw new Error('ENOENT: no such file'); })).toEqual(['--nats-tls-*: ENOENT: no such file']);
  });
});
