import type { ClientAddress, ClientPorts, Clock, Mailbox, SwitchPort, Verbs } from '@lockfabric/ports';
import { clientKey } from '@lockfabric/ports';

/**
 * Fault: the clients of one node (or the listed ones) stop taking steps for a while, like a process
 * under SIGSTOP, then go on as if nothing happened. Times are on the run's clock.
 */
export interface PauseSpec {
  /** Pause every client of this node. */
  readonly node?: number;
  /** Pause these clients (`node/client` keys). */
  readonly clients?: readonly string[];
  /** Start, counted from the start of the run. */
  readonly atNs: number;
  readonly durationNs: number;
}

/** A pause on absolute clock time: [fromNs, toNs). */
export interface PauseWindow {
  readonly fromNs: number;
  readonly toNs: number;
}

export function pauseApplies(pause: PauseSpec, self: ClientAddress): boolean {
  if (pause.node !== undefined && pause.node === self.node) return true;
  return pause.clients?.includes(clientKey(self)) ?? false;
}

/**
 * The client's view of a paused process. A paused process runs no code: a step that would run in
 * a window (a verb completion, a sleep ending, a message arriving) runs when the window ends.
 * Verbs leave the process `sendLagNs` after their post (an event-loop turn on a live node); a
 * pause that starts within that lag holds the verb until it ends, so a verb decided before the
 * pause lands after it. Switch packets are held the same way, and a packet that arrives during a
 * window is handled when it ends (a stopped process runs no handler). Clock time itself is not
 * paused: a resumed client sees the time that passed.
 */
export function pausablePorts(ports: ClientPorts, windows: readonly PauseWindow[], sendLagNs: number): ClientPorts {
  if (windows.length === 0) return ports;
  const clock = ports.clock;
  /** End of the window that holds a step at `ns`, if any. */
  const heldUntil = (ns: number): number | undefined => windows.find((w) => w.fromNs <= ns && ns < w.toNs)?.toNs;
  /** End of the window that holds a verb posted at `ns`: running then, or starting before it leaves. */
  const sendHeldUntil = (ns: number): number | undefined => windows.find((w) => ns < w.toNs && w.fromNs <= ns + sendLagNs)?.toNs;
  const waitOut = async (until: number | undefined): Promise<void> => {
    // Windows may follow each other; keep waiting while a step would land in one.
    for (let end = until; end !== undefined; end = heldUntil(clock.nowNs())) {
      const now = clock.nowNs();
      if (end > now) await clock.sleep(end - now);
    }
  };
  const gate = async <T>(run: () => Promise<T>): Promise<T> => {
    await waitOut(sendHeldUntil(clock.nowNs()));
    try {
      return await run();
    } finally {
      await waitOut(heldUntil(clock.nowNs()));
    }
  };
  const inner = ports.verbs;
  const verbs: Verbs = {
    post: (batch, options) => gate(() => inner.post(batch, options)),
    read: (...args) => gate(() => inner.read(...args)),
    write: (...args) => gate(() => inner.write(...args)),
    cas: (...args) => gate(() => inner.cas(...args)),
    faa: (...args) => gate(() => inner.faa(...args)),
    maskedCas: (...args) => gate(() => inner.maskedCas(...args)),
    maskedFaa: (...args) => gate(() => inner.maskedFaa(...args)),
    isLocal: (addr) => inner.isLocal(addr),
    cpu: inner.cpu,
  };
  const pausedClock: Clock = {
    nowNs: () => clock.nowNs(),
    sleep: async (ns, signal) => {
      await clock.sleep(ns, signal);
      await waitOut(heldUntil(clock.nowNs()));
    },
  };
  const box = ports.mailbox;
  const mailbox: Mailbox = {
    self: box.self,
    send: (message) => {
      const until = sendHeldUntil(clock.nowNs());
      if (until === undefined) box.send(message);
      else void waitOut(until).then(() => box.send(message));
    },
    receive: async (match, options) => {
      const message = await box.receive(match, options);
      await waitOut(heldUntil(clock.nowNs()));
      return message;
    },
  };
  const port = ports.switchPort;
  const switchPort: SwitchPort | undefined = port
    ? {
        machine: port.machine,
        send: (packet) => {
          const until = sendHeldUntil(clock.nowNs());
          if (until === undefined) port.send(packet);
          else void waitOut(until).then(() => port.send(packet));
        },
        onPacket: (handler) => {
          // A packet held over a pause is dropped if its handler is gone by then (the process stopped).
          let subscribed = true;
          const unsubscribe = port.onPacket((packet) => {
            const until = heldUntil(clock.nowNs());
            if (until === undefined) handler(packet);
            else void waitOut(until).then(() => subscribed && handler(packet));
          });
          return () => {
            subscribed = false;
            unsubscribe();
          };
        },
      }
    : undefined;
  return { ...ports, verbs, clock: pausedClock, mailbox, ...(switchPort ? { switchPort } : {}) };
}
