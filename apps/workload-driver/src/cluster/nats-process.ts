import { spawn } from 'node:child_process';
import { freePort } from './local-cluster.js';
import { findNatsServer } from './nats-binary.js';

const START_ATTEMPTS = 3;
const START_TIMEOUT_MS = 10_000;

/**
 * A nats-server owned by one command, on a free loopback port, stopped with the command. Ready is
 * what the server itself reports on stderr (a TCP connect could reach another process's server if
 * the port was taken after probing); when its port was taken it exits, and another port is tried.
 */
export async function startNatsForCommand(): Promise<{ url: string; stop(): Promise<void> }> {
  const binary = findNatsServer();
  if (!binary) throw new Error('nats-server is not installed (apt-get install nats-server)');
  let lastError = '';
  for (let attempt = 0; attempt < START_ATTEMPTS; attempt++) {
    const port = await freePort();
    const child = spawn(binary, ['-a', '127.0.0.1', '-p', String(port)], { stdio: ['ignore', 'ignore', 'pipe'] });
    const stopOnExit = () => child.kill('SIGKILL');
    process.once('exit', stopOnExit);
    const started = await new Promise<boolean>((resolve) => {
      let output = '';
      const timer = setTimeout(() => resolve(false), START_TIMEOUT_MS);
      child.stderr?.on('data', (chunk: Buffer) => {
        output = (output + chunk.toString('utf8')).slice(-8_192);
        if (output.includes(`Listening for client connections on 127.0.0.1:${port}`) && output.includes('Server is ready')) {
          clearTimeout(timer);
          resolve(true);
        }
      });
      child.once('exit', () => {
        clearTimeout(timer);
        lastError = output.trim().split('\n').slice(-2).join(' | ');
        resolve(false);
      });
    });
    if (started) {
      // Keep draining stderr, or a chatty server would block on a full pipe.
      child.stderr?.resume();
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
    process.removeListener('exit', stopOnExit);
    if (child.exitCode === null) child.kill('SIGKILL');
  }
  throw new Error(`nats-server did not start after ${START_ATTEMPTS} attempts${lastError ? `: ${lastError}` : ''}`);
}
