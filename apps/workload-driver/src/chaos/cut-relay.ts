import { Socket, createServer } from 'node:net';
import type { Server } from 'node:net';
import { NatsDeliveryFilter, subjectMatches } from './nats-delivery-filter.js';
import { upgradeNatsTls, type NatsTlsEnds, type NatsTlsTermination } from './nats-tls-termination.js';

/** One relayed server port: clients connect to `listenPort`, the relay connects on to `upstreamPort`. */
export interface RelayRoute {
  /** Unique label, e.g. `memory-0/grpc`. */
  readonly name: string;
  /** The process that serves it (a cut of this process cuts every connection to it). */
  readonly server: string;
  /** 0: any free port (tests). */
  readonly listenPort: number;
  readonly upstreamPort: number;
  readonly upstreamHost?: string;
  /** `nats`: the relay follows the server's deliveries, so a partial partition can drop some (nats-delivery-filter.ts). */
  readonly protocol?: 'nats';
}

/** Names the process on the client side of an accepted connection; undefined when it cannot tell. */
export type ClientAttribution = (socket: Socket) => string | undefined;

export interface CutRelayOptions {
  readonly routes: readonly RelayRoute[];
  readonly attribute?: ClientAttribution;
  /**
   * Bytes a cut connection holds per direction before the relay stops reading from the sender;
   * past it the bytes wait in the kernel's socket buffers and then in the sender, as they would
   * behind a real cut. Default 1 MiB.
   */
  readonly maxHeldBytes?: number;
  /** Most relayed connections at once; more are refused (closed). Default 1024. */
  readonly maxConnections?: number;
  readonly host?: string;
  /**
   * NATS over TLS through the relay: on `nats` routes the relay ends the clients' TLS with a
   * certificate of the cluster CA and opens its own TLS to nats-server, so it still reads the
   * frames a partial partition filters (nats-tls-termination.ts). Without it NATS is relayed as bytes.
   */
  readonly natsTls?: NatsTlsTermination;
}

export interface RelayedConnectionStatus {
  readonly id: number;
  readonly route: string;
  readonly server: string;
  /** The client process, when attribution named one. */
  readonly client?: string;
  readonly cut: boolean;
  /** The client closed or ended (FIN) its end; behind a cut the server learns it at the heal. */
  readonly clientClosed: boolean;
  /** Bytes held in the relay, towards the server and towards the client. */
  readonly heldUpBytes: number;
  readonly heldDownBytes: number;
}

/** A partial partition: NATS deliveries to `target` on these subjects are dropped. */
export interface SubjectDropStatus {
  readonly target: string;
  readonly subjects: readonly string[];
  /** Messages dropped so far under this order. */
  readonly dropped: number;
}

export interface RelayStatus {
  /** Processes currently cut off. */
  readonly cut: readonly string[];
  readonly drops: readonly SubjectDropStatus[];
  readonly ports: Readonly<Record<string, number>>;
  readonly connections: readonly RelayedConnectionStatus[];
  readonly refusedConnections: number;
}

/** What a heal released. */
export interface HealReport {
  readonly target: string;
  /** Connections of the target that were cut. */
  readonly connections: number;
  /** Bytes that were held and are now on their way. */
  readonly releasedBytes: number;
  /** NATS messages a partial partition of the target dropped (when it had one). */
  readonly droppedMessages?: number;
}

export const DEFAULT_MAX_HELD_BYTES = 1 << 20;
export const DEFAULT_MAX_RELAYED_CONNECTIONS = 1_024;

/** One direction of a relayed connection: from `from` to `to`, holding bytes while cut. */
class Direction {
  private readonly held: Buffer[] = [];
  heldBytes = 0;
  private endPending = false;

  constructor(
    private readonly from: Socket,
    private to: Socket | undefined,
    private readonly maxHeldBytes: number,
    private readonly isCut: () => boolean,
    /** What of each chunk goes on (a partial partition's filter); all of it by default. */
    private readonly forwardOf: (chunk: Buffer) => Buffer = (chunk) => chunk,
  ) {
    from.on('data', (chunk: Buffer) => this.onData(this.forwardOf(chunk)));
    from.on('end', () => {
      // A FIN is traffic too: behind a cut it waits like the bytes before it.
      if (this.isCut() || !this.to || this.held.length > 0) this.endPending = true;
      else this.to.end();
    });
  }

  attach(to: Socket): void {
    this.to = to;
    to.on('drain', () => {
      if (!this.isCut()) this.from.resume();
    });
  }

  /** Writes what was held (in order) and resumes reading; returns the bytes released. */
  flush(): number {
    const released = this.heldBytes;
    const to = this.to;
    if (!to) return 0;
    for (const chunk of this.held.splice(0)) to.write(chunk);
    this.heldBytes = 0;
    if (this.endPending) {
      this.endPending = false;
      to.end();
    }
    if (to.writableNeedDrain) this.from.pause();
    else this.from.resume();
    return released;
  }

  private onData(chunk: Buffer): void {
    if (chunk.length === 0) return;
    if (this.isCut() || !this.to) {
      this.held.push(chunk);
      this.heldBytes += chunk.length;
      if (this.heldBytes >= this.maxHeldBytes) this.from.pause();
      return;
    }
    if (!this.to.write(chunk)) this.from.pause();
  }
}

class RelayedConnection {
  upstream: Socket | undefined;
  /** Client to server; with TLS termination it exists once both TLS legs are up (the client sends nothing before). */
  up: Direction | undefined;
  down: Direction | undefined;
  closed = false;
  /** The TLS legs, when the relay terminates NATS TLS. */
  private tlsEnds: NatsTlsEnds | undefined;

  constructor(
    readonly id: number,
    readonly route: RelayRoute,
    private clientName: string | undefined,
    readonly downstream: Socket,
    private readonly relay: CutRelay,
    private readonly maxHeldBytes: number,
    private readonly onClosed: (connection: RelayedConnection) => void,
    private readonly natsTls: NatsTlsTermination | undefined,
  ) {
    if (!natsTls) this.up = new Direction(downstream, undefined, maxHeldBytes, () => this.isCut());
    // A reset behind a cut, like a close, reaches the other side only at the heal.
    downstream.on('error', () => this.closeUnlessCut());
    downstream.on('close', () => this.closeUnlessCut());
    if (!this.isCut()) this.connectUpstream();
  }

  /** The client process, once attribution named one. */
  get client(): string | undefined {
    return this.clientName;
  }

  /**
   * Names the client of a connection that attribution could not name at accept (its /proc entry
   * was not readable yet, or the process list was being rewritten); a name, once given, stays.
   */
  attribute(name: string | undefined): void {
    if (this.clientName === undefined && name !== undefined && !this.closed) this.clientName = name;
  }

  isCut(): boolean {
    return this.relay.isCut(this.route.server) || (this.clientName !== undefined && this.relay.isCut(this.clientName));
  }

  /** After a heal: connect if the cut kept the connection from reaching its server, then release held bytes. */
  heal(): number {
    if (this.closed) return 0;
    if (this.downstream.destroyed) {
      // The client went away behind the cut; the server hears it only now.
      this.close();
      return 0;
    }
    if (!this.upstream) {
      this.connectUpstream();
      return this.up?.heldBytes ?? 0;
    }
    if (this.upstream.destroyed) {
      this.close();
      return 0;
    }
    return (this.up?.flush() ?? 0) + (this.down?.flush() ?? 0);
  }

  status(): RelayedConnectionStatus {
    return {
      id: this.id,
      route: this.route.name,
      server: this.route.server,
      ...(this.client !== undefined ? { client: this.client } : {}),
      cut: this.isCut(),
      clientClosed: this.downstream.destroyed || this.downstream.readableEnded,
      heldUpBytes: this.up?.heldBytes ?? 0,
      heldDownBytes: this.down?.heldBytes ?? 0,
    };
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.tlsEnds?.client.destroy();
    this.tlsEnds?.server.destroy();
    this.downstream.destroy();
    this.upstream?.destroy();
    this.onClosed(this);
  }

  private closeUnlessCut(): void {
    // A close behind a cut reaches the other side only when the cut heals (heal() closes then).
    if (!this.isCut()) this.close();
  }

  private connectUpstream(): void {
    const upstream = new Socket({ allowHalfOpen: true });
    this.upstream = upstream;
    // Latency is what the relayed protocols measure: no Nagle delay on either leg.
    upstream.setNoDelay(true);
    upstream.on('error', () => this.closeUnlessCut());
    upstream.on('close', () => this.closeUnlessCut());
    const host = this.route.upstreamHost ?? '127.0.0.1';
    upstream.connect(this.route.upstreamPort, host, () => {
      if (this.closed) return void upstream.destroy();
      if (!this.natsTls) return this.relayBetween(this.downstream, upstream);
      upgradeNatsTls(this.downstream, upstream, host, this.natsTls).then(
        (ends) => {
          if (this.closed) return void (ends.client.destroy(), ends.server.destroy());
          this.tlsEnds = ends;
          for (const end of [ends.client, ends.server]) {
            end.on('error', () => this.closeUnlessCut());
            end.on('close', () => this.closeUnlessCut());
          }
          this.up = new Direction(ends.client, undefined, this.maxHeldBytes, () => this.isCut());
          this.relayBetween(ends.client, ends.server);
        },
        () => this.close(),
      );
    });
  }

  /** Starts moving bytes between the client's end and the server's (plain sockets or TLS legs). */
  private relayBetween(client: Socket, server: Socket): void {
    // Every NATS connection is parsed from its first byte, so one attributed later (on an order)
    // can have its deliveries filtered from then on.
    const filter = this.route.protocol === 'nats' ? new NatsDeliveryFilter((subject) => this.clientName !== undefined && this.relay.dropsDelivery(this.clientName, subject)) : undefined;
    this.down = new Direction(server, client, this.maxHeldBytes, () => this.isCut(), filter ? (chunk) => filter.feed(chunk) : undefined);
    this.down.attach(client);
    const up = this.up as Direction;
    up.attach(server);
    if (!this.isCut()) up.flush();
  }
}

/**
 * A TCP relay that can cut processes off: every connection of a relayed route runs through it, and
 * a cut process's connections (those it serves and, when attribution names it, those it opened)
 * stop moving in both directions without being closed — bytes wait, timers on both sides keep
 * running, exactly what a network partition looks like to the processes. A heal sends what waited,
 * in order. Connections opened during a cut are accepted but reach their server only at the heal.
 */
export class CutRelay {
  private readonly servers: Server[] = [];
  private readonly boundPorts: Record<string, number> = {};
  private readonly connections = new Set<RelayedConnection>();
  private readonly cutProcesses = new Set<string>();
  private readonly drops = new Map<string, { subjects: readonly string[]; dropped: number }>();
  private nextId = 1;
  private refused = 0;

  private constructor(private readonly options: CutRelayOptions) {}

  static async start(options: CutRelayOptions): Promise<CutRelay> {
    const names = new Set<string>();
    for (const route of options.routes) {
      if (names.has(route.name)) throw new RangeError(`relay route ${JSON.stringify(route.name)} is listed twice`);
      names.add(route.name);
    }
    const relay = new CutRelay(options);
    try {
      for (const route of options.routes) await relay.listen(route);
    } catch (error) {
      await relay.close();
      throw error;
    }
    return relay;
  }

  /** The listening port of each route. */
  get ports(): Readonly<Record<string, number>> {
    return { ...this.boundPorts };
  }

  isCut(process: string): boolean {
    return this.cutProcesses.has(process);
  }

  /** Cuts `target` off; idempotent. Returns how many of its connections are now cut. */
  cut(target: string): number {
    this.reattribute();
    this.cutProcesses.add(target);
    return [...this.connections].filter((c) => c.isCut()).length;
  }

  /**
   * Partial partition: from now on, NATS deliveries to `target` on any of `subjects` (full subject
   * patterns) are dropped, not held — NATS core delivers at most once, so a lost message is what the
   * protocols already expect. Replaces an earlier order for `target`. Returns how many of its NATS
   * connections the relay follows.
   */
  dropSubjects(target: string, subjects: readonly string[]): number {
    this.reattribute();
    this.drops.set(target, { subjects: [...subjects], dropped: 0 });
    return [...this.connections].filter((c) => c.route.protocol === 'nats' && c.client === target).length;
  }

  /** Whether a delivery to `client` on `subject` is dropped (counted when it is). */
  dropsDelivery(client: string, subject: string): boolean {
    const order = this.drops.get(client);
    if (!order || !order.subjects.some((pattern) => subjectMatches(pattern, subject))) return false;
    order.dropped++;
    return true;
  }

  /** Heals `target`'s cut and ends its subject drops; idempotent (a heal of an uncut process releases nothing). */
  heal(target: string): HealReport {
    const dropped = this.drops.get(target)?.dropped;
    this.drops.delete(target);
    const affected = [...this.connections].filter((c) => c.isCut());
    this.cutProcesses.delete(target);
    let releasedBytes = 0;
    let connections = 0;
    for (const connection of affected) {
      if (connection.isCut()) continue; // still cut off through another process
      connections++;
      releasedBytes += connection.heal();
    }
    return { target, connections, releasedBytes, ...(dropped !== undefined ? { droppedMessages: dropped } : {}) };
  }

  status(): RelayStatus {
    return { cut: [...this.cutProcesses], drops: [...this.drops].map(([target, d]) => ({ target, subjects: d.subjects, dropped: d.dropped })), ports: this.ports, connections: [...this.connections].map((c) => c.status()), refusedConnections: this.refused };
  }

  async close(): Promise<void> {
    for (const connection of [...this.connections]) connection.close();
    await Promise.all(this.servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
  }

  /** Asks attribution again for every connection it could not name at accept, before an order acts. */
  private reattribute(): void {
    for (const connection of this.connections) {
      if (connection.client === undefined) connection.attribute(this.attributionOf(connection.downstream));
    }
  }

  private attributionOf(socket: Socket): string | undefined {
    try {
      return this.options.attribute?.(socket);
    } catch {
      return undefined;
    }
  }

  private async listen(route: RelayRoute): Promise<void> {
    const maxConnections = this.options.maxConnections ?? DEFAULT_MAX_RELAYED_CONNECTIONS;
    const server = createServer({ allowHalfOpen: true, pauseOnConnect: true, noDelay: true }, (socket) => {
      if (this.connections.size >= maxConnections) {
        this.refused++;
        socket.destroy();
        return;
      }
      const client = this.attributionOf(socket);
      const natsTls = route.protocol === 'nats' ? this.options.natsTls : undefined;
      const connection = new RelayedConnection(this.nextId++, route, client, socket, this, this.options.maxHeldBytes ?? DEFAULT_MAX_HELD_BYTES, (c) => this.connections.delete(c), natsTls);
      this.connections.add(connection);
      socket.resume();
    });
    this.servers.push(server);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(route.listenPort, this.options.host ?? '127.0.0.1', () => {
        server.off('error', reject);
        const address = server.address();
        this.boundPorts[route.name] = typeof address === 'object' && address ? address.port : route.listenPort;
        resolve();
      });
    });
  }
}

/** `--route NAME=SERVER:LISTEN:UPSTREAM`, e.g. `memory-0/grpc=memory-0:41000:41001`. */
export function parseRoute(text: string): RelayRoute {
  const match = /^([A-Za-z0-9/_-]+)=([a-z]+(?:-\d+)?):(\d{1,5}):(\d{1,5})$/.exec(text);
  if (!match) throw new RangeError(`--route: expected NAME=SERVER:LISTEN_PORT:UPSTREAM_PORT, got ${JSON.stringify(text)}`);
  const [, name, server, listen, upstream] = match;
  return { name: name!, server: server!, listenPort: Number(listen), upstreamPort: Number(upstream), ...(server === 'nats' ? { protocol: 'nats' as const } : {}) };
}
