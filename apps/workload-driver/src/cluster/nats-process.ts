import { spawn } from 'node:child_process';
import { freePort } from './local-cluster.js';
import { findNatsServer } from './nats-binary.js';

/** A nats-server owned by one command, on a free loopback port, stopped with the command. */
export async function startNatsForCommand(): Promise<{ url: string; stop(): Promise<void> }> {
  const binary = findNatsServer();
  if (!binary) throw new Error('nats-server is not installed (apt-get install nats-server)');
  const port = await freePort();
  const child = spawn(binary, ['-a', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' });
  const stopOnExit = () => child.kill('SIGKILL');
  process.once('exit', stopOnExit);
  const deadline = Date.now() + 10_000;
  for (;;) {
    const { Socket } = await import('node:net');
    const open = await new Promise<boolean>((resolve) => {
      const socket = new Socket();
      socket.once('connect', () => (socket.destroy(), resolve(true)));
      socket.once('error', () => resolve(false));
      socket.connect(port, '127.0.0.1');
    });
    if (open) break;
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`nats-server did not start on port ${port}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    url: `nats://127.0.0.1:${port}`,
    stop: async () => {
      process.removeListener('exit', stopOnExit);
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
