import { fromBinary } from '@bufbuild/protobuf';
import { bytesTarget, fc, fuzzDecoder, FuzzFailure, protoBytes, protoMessage, type DecoderTarget } from '@lockfabric/testkit';
import { decodeWire, HistoryEventSchema, WorkloadSpecSchema } from '@lockfabric/wire';
import { toBinary } from '@bufbuild/protobuf';
import { ConfigError } from '@lockfabric/ports';
import { describe, expect, it } from 'vitest';
import { historyEventFromWire, runSpecFromWire } from './wire-form.js';
import { decodeTxnRunSpec, TXN_WIRE_OPTION } from './txn/wire.js';

const TRACE_TXN = JSON.stringify({ workload: { kind: 'trace', compact: [['pay', [2, 5]], ['read', [4]]] } });

/** The transaction option is JSON inside the spec: fuzz its structure, not just its bytes. */
const txnText = fc.oneof(
  fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)),
  fc.jsonValue({ maxDepth: 3 }).map((compact) => JSON.stringify({ workload: { kind: 'trace', compact } })),
  fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 4 }).map((compact) => JSON.stringify({ workload: { kind: 'trace', compact } })),
  fc.tuple(fc.constant(TRACE_TXN), fc.nat()).map(([t, n]) => t.slice(0, n % (t.length + 1))),
);
const txnOption: DecoderTarget<string> = { name: 'driver transaction option', decode: decodeTxnRunSpec, inputs: txnText, inputSize: (s) => s.length };

/** Driver messages: the run spec a compute node receives, the history events the driver receives. */
const validSpec = protoMessage(WorkloadSpecSchema).map((spec) => toBinary(WorkloadSpecSchema, spec));
const validTxnSpec = protoMessage(WorkloadSpecSchema).map((spec) => toBinary(WorkloadSpecSchema, { ...spec, options: { [TXN_WIRE_OPTION]: TRACE_TXN } }));

const runSpec = bytesTarget('driver run spec', (b) => runSpecFromWire(decodeWire(WorkloadSpecSchema, b, 'fuzz')), validSpec);
const txnSpec = bytesTarget('driver run spec with transactions', (b) => runSpecFromWire(decodeWire(WorkloadSpecSchema, b, 'fuzz')), validTxnSpec);
const history = bytesTarget('driver history event', (b) => historyEventFromWire(decodeWire(HistoryEventSchema, b, 'fuzz')), protoBytes(HistoryEventSchema));

describe('driver message decoding under fuzzing', () => {
  it('driver transaction option: typed error or bounded value', () => {
    fuzzDecoder(txnOption);
  });
  for (const target of [runSpec, txnSpec, history] as DecoderTarget<Uint8Array>[]) {
    it(`${target.name}: typed error or bounded value`, () => {
      fuzzDecoder(target);
    });
  }
  it('regression: a trace template that is not an array is a ConfigError, not a TypeError', () => {
    // Shrunk counterexample of the transaction-option property.
    expect(() => decodeTxnRunSpec('{"workload":{"kind":"trace","compact":[null]}}')).toThrow(ConfigError);
    expect(() => decodeTxnRunSpec('{"workload":{"kind":"trace","compact":[["t",{}]]}}')).toThrow(ConfigError);
  });
  it('catches a run-spec decoder that skips the frame guard (mutant)', () => {
    const mutant = bytesTarget('unguarded run spec', (b) => runSpecFromWire(fromBinary(WorkloadSpecSchema, b)), validSpec);
    expect(() => fuzzDecoder(mutant, { runs: 300, seed: 9 })).toThrow(FuzzFailure);
  });
});
