// Test-only helpers (not part of the build).
import { Client, credentials } from '@grpc/grpc-js';
import type { ServiceError } from '@grpc/grpc-js';
import { toBuffer } from '@lockfabric/live';
import type { Logger } from '@lockfabric/live';
import type { FissSwitchControl } from '@lockfabric/lock-catalog-control';

export { startNatsServer, waitFor, type NatsServerHandle } from '@lockfabric/testkit';

/** A logger that keeps its lines. */
export function memoryLogger(): Logger & { readonly lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    info: (message) => lines.push(`INFO ${message}`),
    warn: (message) => lines.push(`WARN ${message}`),
    error: (message) => lines.push(`ERROR ${message}`),
  };
}

/** Calls a unary method with raw bytes; resolves the response bytes or the gRPC error. */
export function callRaw(address: string, path: string, request: Uint8Array): Promise<{ response?: Uint8Array; error?: ServiceError }> {
  const client = new Client(address, credentials.createInsecure());
  return new Promise((resolve) => {
    client.makeUnaryRequest(
      path,
      toBuffer,
      (bytes: Buffer) => new Uint8Array(bytes),
      request,
      (error, response) => {
        client.close();
        resolve(error ? { error } : response ? { response } : {});
      },
    );
  });
}

const LOCKS = 8;

/** A switch control plane over plain arrays of LOCKS locks; `failLoads` makes the next loads fail (the control API unreachable). */
export function fakeSwitch(open: boolean) {
  const names = ['fisslock.seq', 'fisslock.free', 'fisslock.rw', 'fisslock.mid', 'fisslock.inca'];
  const fresh = (): Map<string, number[]> => new Map(names.map((n) => [n, new Array<number>(n === 'fisslock.seq' ? 256 : LOCKS).fill(n === 'fisslock.free' ? 1 : 0)]));
  const state = { regs: fresh(), admission: { open, epoch: open ? 3n : 0n }, failLoads: 0, loads: 0, writes: 0 };
  const control = (): FissSwitchControl => ({
    arrays: names,
    admission: state.admission,
    load: async () => {
      state.loads++;
      if (state.failLoads > 0) {
        state.failLoads--;
        throw new Error('switch control unreachable');
      }
    },
    close: () => undefined,
    readRegister: (a, i) => state.regs.get(a)![i]!,
    fill: (a, v) => void state.regs.get(a)!.fill(v),
    write: (a, i, values) => {
      state.writes++;
      values.forEach((v, k) => (state.regs.get(a)![i + k] = v));
    },
  });
  return { state, control };
}
