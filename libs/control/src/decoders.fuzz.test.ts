import { fromBinary } from '@bufbuild/protobuf';
import { bytesTarget, fc, fuzzDecoder, FuzzFailure, protoBytes, protoMessage, type DecoderTarget } from '@lockfabric/testkit';
import { HeartbeatSchema } from '@lockfabric/wire';
import { toBinary } from '@bufbuild/protobuf';
import { describe, expect, it } from 'vitest';
import { decodeHeartbeat } from './heartbeat-decoder.js';
import { parseRecoveryDetail } from './recovery-wire.js';
import { createSubjects } from './subjects.js';

/** Heartbeats arrive on `hb.<role>.<id>` from any publisher; the subject and body are both untrusted. */
const subjects = createSubjects('fuzz');
const subject = fc.oneof(fc.constantFrom('compute.1', 'memory.0', 'switch.s'), fc.string({ maxLength: 12 })).map((tail) => `${subjects.prefix}.hb.${tail}`);
const validHeartbeat = protoMessage(HeartbeatSchema).map((hb) => toBinary(HeartbeatSchema, { ...hb, role: 'compute', id: '1' }));

const heartbeat: DecoderTarget<{ subject: string; bytes: Uint8Array }> = {
  name: 'heartbeat',
  decode: ({ subject: s, bytes }) => decodeHeartbeat(subjects, s, bytes),
  inputs: fc.record({ subject, bytes: bytesTarget('hb', (b) => b, validHeartbeat).inputs }),
  inputSize: ({ subject: s, bytes }) => s.length + bytes.length,
};

const recoveryDetail: DecoderTarget<string> = {
  name: 'recovery status detail',
  decode: parseRecoveryDetail,
  inputs: fc.oneof(fc.string({ maxLength: 200 }), fc.array(fc.tuple(fc.string({ maxLength: 8 }), fc.string({ maxLength: 8 })), { maxLength: 8 }).map((kv) => kv.map(([k, v]) => `${k}=${v}`).join(' '))),
  inputSize: (s) => s.length,
};

describe('control decoders under fuzzing', () => {
  it('heartbeat: typed error or bounded value', () => {
    fuzzDecoder(heartbeat);
  });
  it('recovery detail: typed error or bounded value', () => {
    fuzzDecoder(recoveryDetail);
  });
  it('catches a heartbeat decoder without the typed-error guard (mutant)', () => {
    const mutant = bytesTarget('unguarded heartbeat', (b) => fromBinary(HeartbeatSchema, b), protoBytes(HeartbeatSchema));
    expect(() => fuzzDecoder(mutant, { runs: 300, seed: 3 })).toThrow(FuzzFailure);
  });
});
