import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import type { Socket } from 'node:net';

/** A process the relay may attribute connections to. */
export interface KnownProcess {
  readonly name: string;
  readonly pid: number;
}

/**
 * The socket inode of a TCP connection's client end in a /proc/net/tcp table: the row whose local
 * port is the client's port and whose remote port is the port it connected to. Undefined when no
 * row matches (the table lists ports in hex, column 1 and 2 as `ADDR:PORT`, the inode in column 9).
 */
export function clientSocketInode(table: string, clientPort: number, serverPort: number): string | undefined {
  for (const line of table.split('\n').slice(1)) {
    const columns = line.trim().split(/\s+/);
    const local = columns[1];
    const remote = columns[2];
    const inode = columns[9];
    if (!local || !remote || !inode) continue;
    if (portOf(local) === clientPort && portOf(remote) === serverPort && inode !== '0') return inode;
  }
  return undefined;
}

function portOf(address: string): number {
  return Number.parseInt(address.slice(address.lastIndexOf(':') + 1), 16);
}

/** The process among `candidates` with an open file descriptor on `socket:[inode]`. */
export function ownerOfInode(inode: string, candidates: readonly KnownProcess[], proc = '/proc'): string | undefined {
  const link = `socket:[${inode}]`;
  for (const candidate of candidates) {
    let fds: string[];
    try {
      fds = readdirSync(`${proc}/${candidate.pid}/fd`);
    } catch {
      continue; // gone, or not ours to look at
    }
    for (const fd of fds) {
      try {
        if (readlinkSync(`${proc}/${candidate.pid}/fd/${fd}`) === link) return candidate.name;
      } catch {
        // closed meanwhile
      }
    }
  }
  return undefined;
}

/**
 * Attribution of relayed connections on Linux, without root: the accepted socket's peer port
 * names the client's socket in /proc/net/tcp, and the client's /proc/PID/fd links name its
 * process. Only processes of the same user can be inspected, which is all a local cluster has.
 * `candidates` is asked at every accept so restarted processes (new pids) are found.
 */
export function procAttribution(candidates: () => readonly KnownProcess[], proc = '/proc'): (socket: Socket) => string | undefined {
  return (socket) => {
    const clientPort = socket.remotePort;
    const serverPort = socket.localPort;
    if (clientPort === undefined || serverPort === undefined) return undefined;
    for (const table of ['tcp', 'tcp6']) {
      let text: string;
      try {
        text = readFileSync(`${proc}/net/${table}`, 'utf8');
      } catch {
        continue;
      }
      const inode = clientSocketInode(text, clientPort, serverPort);
      if (inode) return ownerOfInode(inode, candidates(), proc);
    }
    return undefined;
  };
}
