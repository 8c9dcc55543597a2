import { describe, expect, it } from 'vitest';
import { FabricAccessError, LockTimeoutError } from '../src/index.js';

/** Stack frames an error captured ("    at …" lines after its header). */
function framesOf(error: Error): number {
  return (error.stack ?? '').split('\n').filter((line) => line.trimStart().startsWith('at ')).length;
}

describe('stackless LockFabricErrors', () => {
  it('a FabricAccessError captures no stack frame and keeps its name, code and message', () => {
    const error = new FabricAccessError('unreachable', 'cas to node 0 failed');
    expect(framesOf(error)).toBe(0);
    expect(error.stack).toBe('FabricAccessError: fabric access failed (unreachable): cas to node 0 failed');
    expect(error.code).toBe('FABRIC_ACCESS');
    expect(error).toBeInstanceOf(Error);
  });

  it('other typed errors keep their stack', () => {
    expect(framesOf(new LockTimeoutError(3, 'exclusive', 20))).toBeGreaterThan(0);
  });

  it('leaves Error.stackTraceLimit as it found it', () => {
    const before = Error.stackTraceLimit;
    new FabricAccessError('unreachable', 'x');
    expect(Error.stackTraceLimit).toBe(before);
    expect(framesOf(new Error('plain'))).toBeGreaterThan(0);
  });
});
