import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadedPackages, runCliRecordingImports } from './cli.js';
import type { RecordedImports } from './cli.js';

// A command loads the live machinery (gRPC, NATS, the OpenTelemetry SDK, forge), the HTML renderer
// (Vega) and the Redis client only when the run uses them: a configuration error or a sim run must
// not pay seconds of loading for them. Counted by a resolve hook, never timed.
const HEAVY = /^(@grpc\/grpc-js|@nats-io\/.+|vega.*|ioredis|node-forge|@opentelemetry\/(sdk-|exporter-).+)$/;
const heavy = (run: RecordedImports) => loadedPackages(run.urls).filter((name) => HEAVY.test(name));

describe('lockfabric loads what the run needs', () => {
  it('bench --help loads its text only: not even the report library', async () => {
    const help = await runCliRecordingImports(['bench', '--help']);
    expect(help.code).toBe(0);
    expect(help.specifiers).toContain('@lockfabric/lock-catalog');
    expect(help.specifiers.filter((s) => /^@lockfabric\/(live|report)$/.test(s))).toEqual([]);
    expect(heavy(help)).toEqual([]);
  });

  it('bench on sim and a bench configuration error load none of them', async () => {
    const run = await runCliRecordingImports(['bench', '-p', 'caslock', '--operations', '200', '--json']);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ protocol: 'caslock', substrate: 'sim' });
    // the URLs name packages: the workload's histogram library is one a sim run does load
    expect(loadedPackages(run.urls)).toContain('hdr-histogram-js');
    expect(heavy(run)).toEqual([]);
    const bad = await runCliRecordingImports(['bench', '--floor-ops', '10']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--floor-ops');
    expect(heavy(bad)).toEqual([]);
  });

  it('check on sim loads none of them', async () => {
    const check = await runCliRecordingImports(['check', '-p', 'caslock', '--seeds', '2']);
    expect(check.code).toBe(0);
    expect(heavy(check)).toEqual([]);
  });

  it('they are loaded where a run needs them: the renderer for --report, the cluster code for --trace-ratio', async () => {
    const report = await runCliRecordingImports(['bench', '-p', 'caslock', '--operations', '200', '--report', mkdtempSync(join(tmpdir(), 'lf-report-'))]);
    expect(report.code).toBe(0);
    expect(heavy(report)).toEqual(expect.arrayContaining(['vega', 'vega-lite']));
    // --trace-ratio reads a running cluster's state, so even its configuration error loads that code
    const traced = await runCliRecordingImports(['bench', '--trace-ratio', '1%']);
    expect(traced.code).toBe(2);
    expect(heavy(traced)).toEqual(expect.arrayContaining(['@grpc/grpc-js', 'node-forge']));
  });
});
