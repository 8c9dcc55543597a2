import type { NatsConnection } from '@nats-io/transport-node';
import { errors as natsErrors } from '@nats-io/transport-node';
import { ControlNoRespondersError, ControlRequestTimeoutError } from '@lockfabric/control';
import type { BusMessage, BusStatus, ControlBus, Unsubscribe } from '@lockfabric/control';

/**
 * The control plane's ControlBus over a NATS connection: publish, subscribe (NATS wildcards) and
 * request/reply are NATS's own, so the bytes on the wire are exactly what the coordinator and the
 * compute nodes exchanged before the control plane moved to libs/control. Connection status
 * (`disconnect`/`reconnect`) is reported to `onStatus` listeners.
 */
export class NatsControlBus implements ControlBus {
  private readonly listeners = new Set<(status: BusStatus) => void>();
  private watching = false;

  constructor(private readonly nc: NatsConnection) {}

  publish(subject: string, data: Uint8Array): void {
    this.nc.publish(subject, data);
  }

  subscribe(pattern: string, handler: (message: BusMessage) => void): Unsubscribe {
    const subscription = this.nc.subscribe(pattern, {
      callback: (error, msg) => {
        if (error) return;
        // A throwing callback would close the connection: a handler's bug stays its own.
        try {
          handler(msg.reply ? { subject: msg.subject, data: msg.data, respond: (data) => void msg.respond(data) } : { subject: msg.subject, data: msg.data });
        } catch {
          // the handler counts and logs what it could not handle
        }
      },
    });
    return () => subscription.unsubscribe();
  }

  async request(subject: string, data: Uint8Array, options: { readonly timeoutMs: number }): Promise<Uint8Array> {
    try {
      return (await this.nc.request(subject, data, { timeout: options.timeoutMs })).data;
    } catch (error) {
      const cause = error instanceof natsErrors.RequestError ? error.cause : error;
      if (cause instanceof natsErrors.NoRespondersError || (error instanceof natsErrors.RequestError && error.isNoResponders())) throw new ControlNoRespondersError(subject);
      if (cause instanceof natsErrors.TimeoutError) throw new ControlRequestTimeoutError(subject, options.timeoutMs);
      throw error;
    }
  }

  onStatus(listener: (status: BusStatus) => void): Unsubscribe {
    this.listeners.add(listener);
    if (!this.watching) {
      this.watching = true;
      void (async () => {
        for await (const status of this.nc.status()) {
          const mapped: BusStatus | undefined = status.type === 'disconnect' ? 'disconnected' : status.type === 'reconnect' ? 'reconnected' : undefined;
          if (mapped) for (const l of [...this.listeners]) l(mapped);
        }
      })().catch(() => undefined);
    }
    return () => this.listeners.delete(listener);
  }
}
