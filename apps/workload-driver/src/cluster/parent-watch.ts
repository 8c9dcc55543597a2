import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { driverEntry } from './paths.js';

/** The watch of one temporary cluster, held by the CLI that started it. */
export interface ParentWatch {
  /** The CLI stopped the cluster itself: the watch finds nothing left and exits. */
  close(): void;
}

/**
 * Starts the parent watch of the temporary cluster in `dir` (see parent-watch-main.ts). A pipe on
 * its stdin rather than a `--parent-pid` poll: the kernel closes the pipe the moment this process
 * dies, with no polling delay and no pid reuse to fool it, and Node has no PR_SET_PDEATHSIG. The
 * pipe's end here is unreferenced, so the watch never keeps the CLI alive.
 */
export function startParentWatch(dir: string): ParentWatch {
  const fd = openSync(join(dir, 'parent-watch.log'), 'a');
  try {
    const child = spawn(process.execPath, [driverEntry('cluster/parent-watch-main.js'), dir], { detached: true, stdio: ['pipe', fd, fd] });
    child.unref();
    (child.stdin as unknown as Socket).unref();
    return { close: () => void child.stdin?.end() };
  } finally {
    closeSync(fd);
  }
}
