import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '@lockfabric/ports';
import { afterAll, describe, expect, it } from 'vitest';
import { loadTlsMaterial, tlsFilesIn } from './credentials.js';

const dir = mkdtempSync(join(tmpdir(), 'lockfabric-tls-files-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('TLS files', () => {
  it('lists every unreadable or non-PEM file in one ConfigError', () => {
    writeFileSync(join(dir, 'tls.crt'), 'not a certificate');
    let error: unknown;
    try {
      loadTlsMaterial(tlsFilesIn(dir));
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const issues = (error as ConfigError).issues.join('\n');
    expect(issues).toMatch(/tls\.ca: cannot read .*ca\.crt \(ENOENT\)/);
    expect(issues).toMatch(/tls\.cert: .*tls\.crt is not a PEM file/);
    expect(issues).toMatch(/tls\.key: cannot read .*tls\.key \(ENOENT\)/);
  });

  it('reads the three PEM files of a directory', () => {
    for (const name of ['ca.crt', 'tls.crt', 'tls.key']) writeFileSync(join(dir, name), `-----BEGIN X-----\n${name}\n-----END X-----\n`);
    expect(loadTlsMaterial(tlsFilesIn(dir)).key.toString()).toContain('tls.key');
  });
});
