import type { ClientPorts, LocalMemory, Verbs } from '@lockfabric/ports';

const never = <T>(): Promise<T> => new Promise<T>(() => undefined);

export type VerbName = 'post' | 'read' | 'write' | 'cas' | 'faa' | 'maskedCas' | 'maskedFaa';

/**
 * Ports of a client that dies the moment `diesAfter` says so: the verb that triggered it has run
 * (its effect stays), but its result and every later verb, CPU access and sleep never come back,
 * like a process killed right after that verb landed. `died` resolves with the virtual time.
 * With `resumeAfterNs` the client is only stopped (SIGSTOP) for that long, from just after that
 * verb's result came back, then carries on.
 */
export function dyingPorts(
  ports: ClientPorts,
  diesAfter: (verb: VerbName, args: readonly unknown[], result: unknown) => boolean,
  resumeAfterNs?: number,
): { ports: ClientPorts; died: Promise<number>; isDead: () => boolean } {
  let dead = false;
  let stoppedUntilNs = 0;
  const waitWhileStopped = async () => {
    const leftNs = stoppedUntilNs - ports.clock.nowNs();
    if (leftNs > 0) await ports.clock.sleep(leftNs);
  };
  let announce: (timeNs: number) => void = () => undefined;
  const died = new Promise<number>((resolve) => (announce = resolve));
  const guarded =
    <A extends unknown[], R>(run: (...args: A) => Promise<R>, verb?: VerbName) =>
    async (...args: A): Promise<R> => {
      if (dead) return never();
      await waitWhileStopped();
      const result = await run(...args);
      if (dead) return never();
      if (verb && stoppedUntilNs === 0 && diesAfter(verb, args, result)) {
        announce(ports.clock.nowNs());
        if (resumeAfterNs === undefined) {
          dead = true;
          return never();
        }
        // Stopped right after the verb's result came back: the next step waits.
        stoppedUntilNs = ports.clock.nowNs() + resumeAfterNs;
      }
      return result;
    };
  const v = ports.verbs;
  const c = v.cpu;
  const cpu: LocalMemory = {
    load: guarded((addr) => c.load(addr)),
    store: guarded((addr, value) => c.store(addr, value)),
    cas: guarded((addr, compare, swap) => c.cas(addr, compare, swap)),
    faa: guarded((addr, add) => c.faa(addr, add)),
    waitWhile: guarded((addr, value, signal) => c.waitWhile(addr, value, signal)),
  };
  const verbs: Verbs = {
    post: guarded((batch, options) => v.post(batch, options), 'post'),
    read: guarded((addr, length, options) => v.read(addr, length, options), 'read'),
    write: guarded((addr, data, options) => v.write(addr, data, options), 'write'),
    cas: guarded((addr, compare, swap, options) => v.cas(addr, compare, swap, options), 'cas'),
    faa: guarded((addr, add, options) => v.faa(addr, add, options), 'faa'),
    maskedCas: guarded((addr, width, compare, swap, compareMask, swapMask, options) => v.maskedCas(addr, width, compare, swap, compareMask, swapMask, options), 'maskedCas'),
    maskedFaa: guarded((addr, width, add, boundaryMask, options) => v.maskedFaa(addr, width, add, boundaryMask, options), 'maskedFaa'),
    isLocal: (addr) => v.isLocal(addr),
    cpu,
  };
  const clock = { nowNs: () => ports.clock.nowNs(), sleep: guarded((ns: number, signal?: AbortSignal) => ports.clock.sleep(ns, signal)) };
  return { ports: { ...ports, verbs, clock }, died, isDead: () => dead };
}
