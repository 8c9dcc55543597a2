// Test-only helpers (not part of the build).
import { Client, credentials } from '@grpc/grpc-js';
import type { ServiceError } from '@grpc/grpc-js';
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { grpcPath, toBuffer } from '@lockfabric/live';
import { DescribeSwitchRequestSchema, DescribeSwitchResponseSchema, SwitchControlService } from '@lockfabric/wire';
import type { DescribeSwitchResponse } from '@lockfabric/wire';
import type { Logger } from '@lockfabric/live';
import type { LockPacket, NodeId } from '@lockfabric/ports';
import type { Timers } from '../src/delayed-deliveries.js';

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

/** Timers that fire only when the test advances time. */
export class ManualTimers implements Timers {
  private nowMs = 0;
  private nextId = 0;
  private readonly pending = new Map<number, { readonly atMs: number; readonly callback: () => void }>();

  setTimeout(callback: () => void, delayMs: number): unknown {
    const id = this.nextId++;
    this.pending.set(id, { atMs: this.nowMs + delayMs, callback });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.pending.delete(handle as number);
  }

  get scheduled(): number {
    return this.pending.size;
  }

  /** Moves time forward, firing due timers in time order (ties in scheduling order). */
  advance(ms: number): void {
    this.nowMs += ms;
    const due = [...this.pending.entries()].filter(([, t]) => t.atMs <= this.nowMs).sort((a, b) => a[1].atMs - b[1].atMs || a[0] - b[0]);
    for (const [id, timer] of due) {
      this.pending.delete(id);
      timer.callback();
    }
  }
}

export function packet(overrides: Partial<LockPacket> & { dst?: NodeId } = {}): LockPacket {
  return { type: 'acquire', lock: 7, machine: 1, task: 0, mode: 'exclusive', incarnation: 1, seq: 1, flags: 0, ...overrides };
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

/** The switch's Describe over its real gRPC control port. */
export async function describeSwitchAt(address: string): Promise<DescribeSwitchResponse> {
  const { response, error } = await callRaw(address, grpcPath(SwitchControlService.method.describe), toBinary(DescribeSwitchRequestSchema, create(DescribeSwitchRequestSchema)));
  if (error) throw error;
  return fromBinary(DescribeSwitchResponseSchema, response ?? new Uint8Array());
}
