import { fromBinary, type DescMessage } from '@bufbuild/protobuf';
import { bytesTarget, fuzzDecoder, FuzzFailure, fuzzRuns, protoBytes, type DecoderTarget } from '@lockfabric/testkit';
import { describe, expect, it } from 'vitest';
import * as control from './gen/lockfabric/v1/control_pb.js';
import * as driver from './gen/lockfabric/v1/driver_pb.js';
import * as lockAdmin from './gen/lockfabric/v1/lock_admin_pb.js';
import { MessageSchema } from './gen/lockfabric/v1/message_pb.js';
import { PacketBatchSchema } from './gen/lockfabric/v1/packet_pb.js';
import { CompletionBatchSchema, WorkRequestBatchSchema } from './gen/lockfabric/v1/verbs_pb.js';
import { decodeWire } from './decode.js';
import { decodeDoorbell } from './doorbell.js';
import { decodeMessage, messageFromWire } from './message-codec.js';
import { decodePacketBatch } from './packet-codec.js';
import { decodeCompletionBatch, decodeWorkRequestBatch } from './verbs-binary.js';
import { completionFromWire, workRequestFromWire } from './verbs-codec.js';

/**
 * Every decoder of bytes from the network, fuzzed with random bytes and mutations of valid
 * encodings (see libs/testkit fuzz.ts for the property). Each family also has a mutant, the same
 * decoder without its typed-error guard, that the property must catch.
 */
const SOURCE = 'fuzz';

const verbTargets: DecoderTarget<Uint8Array>[] = [
  // What the memory node does with a verb batch: decode the frame, then each request.
  bytesTarget('verbs work-request batch', (b) => decodeWorkRequestBatch(b, SOURCE).requests.map((r) => workRequestFromWire(r, SOURCE)), protoBytes(WorkRequestBatchSchema)),
  // The memory node's direct path for the same frames: a value or undefined, never an exception.
  bytesTarget('verbs doorbell, direct', (b) => decodeDoorbell(b) ?? null, protoBytes(WorkRequestBatchSchema)),
  bytesTarget('verbs completion batch', (b) => decodeCompletionBatch(b, SOURCE).completions.map((c) => completionFromWire(c, SOURCE)), protoBytes(CompletionBatchSchema)),
  bytesTarget('mailbox message', (b) => decodeMessage(b, SOURCE), protoBytes(MessageSchema)),
  bytesTarget('lock packet batch', (b) => decodePacketBatch(b, SOURCE), protoBytes(PacketBatchSchema)),
];

function schemasOf(module: Record<string, unknown>): DescMessage[] {
  return Object.entries(module)
    .filter(([name, value]) => name.endsWith('Schema') && (value as { kind?: string }).kind === 'message')
    .map(([, value]) => value as DescMessage);
}

/** Control, driver and lock-admin messages all enter through decodeWire. */
const protoTargets: DecoderTarget<Uint8Array>[] = [...schemasOf(control), ...schemasOf(driver), ...schemasOf(lockAdmin)].map((schema) =>
  bytesTarget(`decodeWire ${schema.typeName}`, (b) => decodeWire(schema, b, SOURCE), protoBytes(schema)),
);

describe('wire decoders under fuzzing', () => {
  for (const target of verbTargets) {
    it(`${target.name}: typed error or bounded value`, () => {
      fuzzDecoder(target);
    });
  }

  it('covers every control, driver and lock-admin message', () => {
    expect(protoTargets.length).toBeGreaterThan(40);
    for (const target of protoTargets) fuzzDecoder(target, { runs: fuzzRuns(40) });
  });
});

describe('the property catches decoders without their guard (mutants)', () => {
  const mutants: DecoderTarget<Uint8Array>[] = [
    bytesTarget('unguarded work-request batch', (b) => fromBinary(WorkRequestBatchSchema, b), protoBytes(WorkRequestBatchSchema)),
    bytesTarget('unguarded completion batch', (b) => fromBinary(CompletionBatchSchema, b), protoBytes(CompletionBatchSchema)),
    bytesTarget('unguarded mailbox message', (b) => messageFromWire(fromBinary(MessageSchema, b), SOURCE), protoBytes(MessageSchema)),
    bytesTarget('unguarded packet batch', (b) => fromBinary(PacketBatchSchema, b), protoBytes(PacketBatchSchema)),
    bytesTarget('unguarded control message', (b) => fromBinary(control.MembershipViewSchema, b), protoBytes(control.MembershipViewSchema)),
  ];
  for (const mutant of mutants) {
    it(mutant.name, () => {
      expect(() => fuzzDecoder(mutant, { runs: 300, seed: 42 })).toThrow(FuzzFailure);
    });
  }
});
