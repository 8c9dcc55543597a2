import type { ClientPorts, Mailbox, SwitchPort, Verbs } from '@lockfabric/ports';

/**
 * Fault of an in-memory run: compute node `node` is cut off from the network (memory nodes,
 * switch, other nodes, the coordinator) for `durationNs` from `atNs` after the start, then
 * healed. Unlike a pause its process keeps running: timers fire, timeouts expire.
 */
export interface PartitionSpec {
  readonly node: number;
  readonly atNs: number;
  readonly durationNs: number;
}

/** A cut on absolute clock time: [fromNs, toNs). */
export interface CutWindow {
  readonly fromNs: number;
  readonly toNs: number;
}

/**
 * A node's ports behind a network cut. Verbs use RDMA reliable connections, which retransmit: a
 * verb posted during a cut leaves when it heals, and a completion due during a cut comes back
 * when it heals. Messages go over a client that buffers while it reconnects (NATS): sent and
 * received once the cut heals. Switch packets are Ethernet frames: lost in both directions. The
 * clock is not touched — the process keeps running.
 */
export function partitionedPorts(ports: ClientPorts, windows: readonly CutWindow[]): ClientPorts {
  if (windows.length === 0) return ports;
  const { clock } = ports;
  const cutUntil = (ns: number): number | undefined => windows.find((w) => w.fromNs <= ns && ns < w.toNs)?.toNs;
  const waitOut = async (): Promise<void> => {
    for (let end = cutUntil(clock.nowNs()); end !== undefined; end = cutUntil(clock.nowNs())) await clock.sleep(end - clock.nowNs());
  };
  const across = async <T>(run: () => Promise<T>): Promise<T> => {
    await waitOut();
    const result = await run();
    await waitOut();
    return result;
  };
  const inner = ports.verbs;
  const verbs: Verbs = {
    post: (batch, options) => across(() => inner.post(batch, options)),
    read: (...args) => across(() => inner.read(...args)),
    write: (...args) => across(() => inner.write(...args)),
    cas: (...args) => across(() => inner.cas(...args)),
    faa: (...args) => across(() => inner.faa(...args)),
    maskedCas: (...args) => across(() => inner.maskedCas(...args)),
    maskedFaa: (...args) => across(() => inner.maskedFaa(...args)),
    isLocal: (addr) => inner.isLocal(addr),
    cpu: inner.cpu,
  };
  const box = ports.mailbox;
  const mailbox: Mailbox = {
    self: box.self,
    send: (message) => {
      if (cutUntil(clock.nowNs()) === undefined) box.send(message);
      else void waitOut().then(() => box.send(message));
    },
    receive: async (match, options) => {
      const message = await box.receive(match, options);
      await waitOut();
      return message;
    },
  };
  const port = ports.switchPort;
  const switchPort: SwitchPort | undefined = port
    ? {
        machine: port.machine,
        send: (packet) => {
          if (cutUntil(clock.nowNs()) === undefined) port.send(packet);
        },
        onPacket: (handler) =>
          port.onPacket((packet) => {
            if (cutUntil(clock.nowNs()) === undefined) handler(packet);
          }),
      }
    : undefined;
  return { ...ports, verbs, mailbox, ...(switchPort ? { switchPort } : {}) };
}
