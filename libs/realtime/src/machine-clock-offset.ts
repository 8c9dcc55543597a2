import { randomUUID } from 'node:crypto';
import { linkSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const NS_PER_MS = 1_000_000n;
/** Wall-clock millisecond edges sampled by a calibration; the largest offset seen wins. */
const CALIBRATION_EDGES = 25;
/** A shared offset this far from a fresh estimate predates a wall-clock step. */
const STALE_AFTER_NS = 1_000_000_000n;

/**
 * One offset from this machine's monotonic clock (CLOCK_MONOTONIC, `process.hrtime`: one base for
 * every process since boot) to wall time in ns since the Unix epoch, shared by every process on the
 * machine through a file named after the boot id. Sharing is what matters: merged live histories
 * compare times taken in different processes, and any per-process estimate of the offset
 * (`performance.timeOrigin` included) was measured up to several ms apart between processes started
 * on a loaded machine — more than a lock handover between compute nodes, so the checker saw
 * overlaps that never happened. The first process calibrates and publishes atomically (link, which
 * fails if the file exists); the others read it. The offset is only as right as one calibration,
 * but every process on the machine uses the same one.
 */
export function machineClockOffsetNs(dir = tmpdir()): bigint {
  const path = join(dir, `lockfabric-clock-${bootId()}.txt`);
  const shared = readOffset(path);
  // A wall-clock step since the file was written (a VM restored from a snapshot keeps its boot id)
  // shows as a large disagreement with a quick estimate: then calibrate again and replace the file.
  if (shared !== undefined) {
    const quick = calibrate(3);
    if (abs(quick - shared) < STALE_AFTER_NS) return shared;
    try {
      unlinkSync(path);
    } catch {
      // another process replaced it already
    }
  }
  const mine = calibrate();
  const scratch = join(dir, `lockfabric-clock-${randomUUID()}.tmp`);
  try {
    writeFileSync(scratch, `${mine}\n`);
    linkSync(scratch, path);
  } catch {
    // another process published first (EEXIST), or the directory is not writable: read below
  } finally {
    try {
      unlinkSync(scratch);
    } catch {
      // never written
    }
  }
  return readOffset(path) ?? mine;
}

/** Right after `Date.now()` ticks, the wall time is that millisecond within the loop's µs; a read delayed by preemption only lowers the estimate. */
export function calibrate(edges = CALIBRATION_EDGES): bigint {
  let best: bigint | undefined;
  for (let edge = 0; edge < edges; edge++) {
    const before = Date.now();
    let wallMs = before;
    while (wallMs === before) wallMs = Date.now();
    const offset = BigInt(wallMs) * NS_PER_MS - process.hrtime.bigint();
    if (best === undefined || offset > best) best = offset;
  }
  return best as bigint;
}

function abs(x: bigint): bigint {
  return x < 0n ? -x : x;
}

function readOffset(path: string): bigint | undefined {
  try {
    const text = readFileSync(path, 'utf8').trim();
    return /^-?\d+$/.test(text) ? BigInt(text) : undefined;
  } catch {
    return undefined;
  }
}

function bootId(): string {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim().replace(/[^A-Za-z0-9-]/g, '');
  } catch {
    // Not Linux: no shared boot identity; the file then lives as long as the temp directory.
    return 'no-boot-id';
  }
}
