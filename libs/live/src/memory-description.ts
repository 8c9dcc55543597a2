import { create } from '@bufbuild/protobuf';
import type { NodeId } from '@lockfabric/ports';
import { DescribeResponseSchema, type DescribeResponse } from '@lockfabric/wire';

/** What a memory node serves: its regions and the lock tables placed in them. */
export interface MemoryDescription {
  readonly node: NodeId;
  /** The serving process's incarnation (start time, ms); 0 when the server did not say. */
  readonly incarnation?: number;
  readonly regions: readonly { readonly region: number; readonly rkey: number; readonly sizeBytes: number; readonly name?: string }[];
  readonly lockTables?: readonly {
    readonly name: string;
    readonly region: number;
    readonly baseOffset: number;
    readonly entryBytes: number;
    readonly lockCount: number;
  }[];
}

export function memoryDescriptionToWire(description: MemoryDescription): DescribeResponse {
  return create(DescribeResponseSchema, {
    node: description.node,
    incarnation: BigInt(description.incarnation ?? 0),
    regions: description.regions.map((r) => ({ region: r.region, rkey: r.rkey, sizeBytes: BigInt(r.sizeBytes), name: r.name ?? '' })),
    lockTables: (description.lockTables ?? []).map((t) => ({ ...t, baseOffset: BigInt(t.baseOffset) })),
  });
}

export function memoryDescriptionFromWire(wire: DescribeResponse): MemoryDescription {
  return {
    node: wire.node,
    incarnation: Number(wire.incarnation),
    regions: wire.regions.map((r) => ({ region: r.region, rkey: r.rkey, sizeBytes: Number(r.sizeBytes), ...(r.name ? { name: r.name } : {}) })),
    lockTables: wire.lockTables.map((t) => ({
      name: t.name,
      region: t.region,
      baseOffset: Number(t.baseOffset),
      entryBytes: t.entryBytes,
      lockCount: t.lockCount,
    })),
  };
}
