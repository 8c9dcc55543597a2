import { MalformedInputError } from '@lockfabric/ports';
import { HeartbeatSchema, decodeWire } from '@lockfabric/wire';
import type { HeartbeatInput } from './failure-detector.js';
import type { Subjects } from './subjects.js';

/**
 * A heartbeat from `hb.<role>.<id>`. Protobuf decodes many random byte strings without error, so
 * the body must also name the role and id of its subject: garbage does not become a member.
 */
export function decodeHeartbeat(subjects: Subjects, subject: string, bytes: Uint8Array): HeartbeatInput {
  const base = `${subjects.prefix}.hb.`;
  const tokens = subject.startsWith(base) ? subject.slice(base.length).split('.') : [];
  const [role, id] = tokens;
  if (tokens.length !== 2 || !role || !id) throw new MalformedInputError(subject, `not a heartbeat subject (expected ${base}<role>.<id>)`);
  const hb = decodeWire(HeartbeatSchema, bytes, subject);
  if (hb.role !== role || hb.id !== id) {
    throw new MalformedInputError(subject, `heartbeat names ${JSON.stringify(hb.role)}/${JSON.stringify(hb.id)} but was published for ${role}/${id}`);
  }
  return { role, id, node: hb.node, incarnation: hb.incarnation, seq: hb.seq, ready: hb.ready };
}
