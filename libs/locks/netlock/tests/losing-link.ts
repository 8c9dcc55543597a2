import type { ClientPorts, LockPacket, SwitchPort } from '@lockfabric/ports';

/** `ports` whose switch link loses the first `count` packets (either way) that `match` picks, as a cut or switch loss would. */
export function losing(ports: ClientPorts, match: (packet: LockPacket) => boolean, count = 1): ClientPorts & { lost: LockPacket[] } {
  const inner = ports.switchPort!;
  const lost: LockPacket[] = [];
  const lose = (packet: LockPacket) => {
    if (lost.length >= count || !match(packet)) return false;
    lost.push(packet);
    return true;
  };
  const port: SwitchPort = {
    machine: inner.machine,
    send: (packet) => (lose(packet) ? undefined : inner.send(packet)),
    onPacket: (handler) => inner.onPacket((packet) => (lose(packet) ? undefined : handler(packet))),
  };
  return { ...ports, switchPort: port, lost };
}

/** `ports` whose switch link carries every packet that `match` picks twice (either way), as switch duplication would. */
export function duplicating(ports: ClientPorts, match: (packet: LockPacket) => boolean): ClientPorts {
  const inner = ports.switchPort!;
  const port: SwitchPort = {
    machine: inner.machine,
    send: (packet) => {
      inner.send(packet);
      if (match(packet)) inner.send(packet);
    },
    onPacket: (handler) =>
      inner.onPacket((packet) => {
        handler(packet);
        if (match(packet)) handler(packet);
      }),
  };
  return { ...ports, switchPort: port };
}
