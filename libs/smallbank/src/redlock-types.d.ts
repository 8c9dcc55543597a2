// redlock 5.0.0-beta.2 ships types that NodeNext resolution cannot reach through its "exports"
// map (no "types" condition); this declares the part we use, checked against its dist/index.d.ts.
declare module 'redlock' {
  import type { EventEmitter } from 'node:events';
  import type { Redis } from 'ioredis';
  export class ExecutionError extends Error {}
  export interface Lock {
    release(): Promise<unknown>;
  }
  export interface Settings {
    readonly driftFactor: number;
    readonly retryCount: number;
    readonly retryDelay: number;
    readonly retryJitter: number;
    readonly automaticExtensionThreshold: number;
  }
  export default class Redlock extends EventEmitter {
    constructor(clients: Iterable<Redis>, settings?: Partial<Settings>);
    acquire(resources: string[], duration: number, settings?: Partial<Settings>): Promise<Lock>;
  }
}
