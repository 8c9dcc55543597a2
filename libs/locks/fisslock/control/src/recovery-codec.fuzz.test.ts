import { fromBinary } from '@bufbuild/protobuf';
import { bytesTarget, fuzzDecoder, FuzzFailure, protoBytes } from '@lockfabric/testkit';
import { decodeWire, FissServerReportSchema } from '@lockfabric/wire';
import { describe, expect, it } from 'vitest';
import { serverReportFromWire } from './recovery-codec.js';

/** FissLock recovery S1 reports reach the coordinator from every compute node (FissLock §5). */
const report = bytesTarget('fisslock server report', (b) => serverReportFromWire(decodeWire(FissServerReportSchema, b, 'fuzz'), 'fuzz'), protoBytes(FissServerReportSchema));

describe('FissLock recovery report decoding under fuzzing', () => {
  it('typed error or bounded value', () => {
    fuzzDecoder(report);
  });
  it('catches a decoder that skips the frame guard (mutant)', () => {
    const mutant = bytesTarget('unguarded report', (b) => serverReportFromWire(fromBinary(FissServerReportSchema, b), 'fuzz'), protoBytes(FissServerReportSchema));
    expect(() => fuzzDecoder(mutant, { runs: 300, seed: 5 })).toThrow(FuzzFailure);
  });
});
