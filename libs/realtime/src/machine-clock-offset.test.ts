import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { calibrate, machineClockOffsetNs } from './machine-clock-offset.js';

const dirs: string[] = [];
const scratch = () => {
  const dir = mkdtempSync(join(tmpdir(), 'clock-offset-'));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('machineClockOffsetNs', () => {
  it('the first caller publishes its calibration; later callers get exactly that value', () => {
    const dir = scratch();
    const first = machineClockOffsetNs(dir);
    const files = readdirSync(dir);
    expect(files).toHaveLength(1);
    expect(BigInt(readFileSync(join(dir, files[0]!), 'utf8').trim())).toBe(first);
    // A different process would calibrate differently; here the shared file is what it returns.
    writeFileSync(join(dir, files[0]!), `${first + 12_345n}\n`);
    expect(machineClockOffsetNs(dir)).toBe(first + 12_345n);
  });

  it('replaces a shared offset that a wall-clock step made stale', () => {
    const dir = scratch();
    const first = machineClockOffsetNs(dir);
    const [file] = readdirSync(dir);
    writeFileSync(join(dir, file!), `${first - 5_000_000_000n}\n`);
    const again = machineClockOffsetNs(dir);
    expect(again - first < 1_000_000_000n && first - again < 1_000_000_000n).toBe(true);
    expect(BigInt(readFileSync(join(dir, file!), 'utf8').trim())).toBe(again);
  });

  it('a calibration matches the wall clock at millisecond precision', () => {
    const offset = calibrate(5);
    const wallNs = BigInt(Date.now()) * 1_000_000n;
    const derived = process.hrtime.bigint() + offset;
    // Date.now() floors to the ms: the derived time lies within [that ms, the next ms) up to scheduling.
    expect(derived >= wallNs - 1_000_000n && derived < wallNs + 50_000_000n).toBe(true);
  });
});
