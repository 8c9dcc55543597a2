import { fromBinary } from '@bufbuild/protobuf';
import { bytesTarget, fuzzDecoder, FuzzFailure, protoBytes } from '@lockfabric/testkit';
import { decodeWire, FissMachineOrdersSchema } from '@lockfabric/wire';
import { LockFabricError } from '@lockfabric/ports';
import { describe, expect, it } from 'vitest';
import { machineOrdersFromWire } from './recovery-codec.js';

/** FissLock recovery S2 orders reach each compute node from the coordinator (FissLock §5). */
const orders = bytesTarget('fisslock machine orders', (b) => machineOrdersFromWire(decodeWire(FissMachineOrdersSchema, b, 'fuzz'), 'fuzz'), protoBytes(FissMachineOrdersSchema));

describe('FissLock recovery orders decoding under fuzzing', () => {
  it('typed error or bounded value', () => {
    fuzzDecoder(orders);
  });
  it('regression: an abort order without a request is a typed error (shrunk counterexample, seed 1)', () => {
    const bytes = Buffer.from('08ffffffff0f2214088080808001320908800110ffffffff0f1a0120', 'hex');
    let error: unknown;
    try {
      machineOrdersFromWire(decodeWire(FissMachineOrdersSchema, bytes, 'fuzz'), 'fuzz');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(LockFabricError);
    expect((error as LockFabricError).code).toBe('FISS_WIRE');
  });
  it('catches a decoder that skips the frame guard (mutant)', () => {
    const mutant = bytesTarget('unguarded orders', (b) => machineOrdersFromWire(fromBinary(FissMachineOrdersSchema, b), 'fuzz'), protoBytes(FissMachineOrdersSchema));
    expect(() => fuzzDecoder(mutant, { runs: 300, seed: 5 })).toThrow(FuzzFailure);
  });
});
