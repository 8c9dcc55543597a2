import { create, toBinary } from '@bufbuild/protobuf';
import { createSubjects } from './subjects.js';
import { MalformedInputError } from '@lockfabric/ports';
import { HeartbeatSchema } from '@lockfabric/wire';
import { describe, expect, it } from 'vitest';
import { decodeHeartbeat } from './heartbeat-decoder.js';

const subjects = createSubjects('hb-test');
const subject = subjects.heartbeat('memory', '3');
const bytes = (init: Parameters<typeof create<typeof HeartbeatSchema>>[1]) => toBinary(HeartbeatSchema, create(HeartbeatSchema, init));

describe('decodeHeartbeat', () => {
  it('decodes a heartbeat whose body matches its subject', () => {
    const hb = decodeHeartbeat(subjects, subject, bytes({ role: 'memory', id: '3', node: 3, incarnation: 5n, seq: 8n, ready: true }));
    expect(hb).toStrictEqual({ role: 'memory', id: '3', node: 3, incarnation: 5n, seq: 8n, ready: true });
  });

  it.each([
    ['bytes that are not protobuf', subject, new Uint8Array([0xff, 0xff, 0xff]), /not a lockfabric.v1.Heartbeat/],
    ['an empty body (decodes to an anonymous heartbeat)', subject, new Uint8Array(), /names "".*"" but was published for memory\/3/],
    ['a body for another member', subject, bytes({ role: 'memory', id: '4' }), /published for memory\/3/],
    ['a subject outside the heartbeat space', subjects.membership(), bytes({ role: 'memory', id: '3' }), /not a heartbeat subject/],
    ['a subject of another cluster', createSubjects('other').heartbeat('memory', '3'), bytes({ role: 'memory', id: '3' }), /not a heartbeat subject/],
  ])('rejects %s as malformed input', (_what, on, data, message) => {
    expect(() => decodeHeartbeat(subjects, on, data)).toThrow(MalformedInputError);
    expect(() => decodeHeartbeat(subjects, on, data)).toThrow(message);
  });
});
