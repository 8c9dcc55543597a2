import type { HealReport, RelayStatus } from './cut-relay.js';
import { LockFabricError, errorMessage } from '@lockfabric/ports';

/** The cut proxy did not answer, or refused an order; the message says which and why. */
export class CutProxyError extends LockFabricError {
  readonly code = 'CUT_PROXY';
  constructor(message: string) {
    super(message);
    this.name = 'CutProxyError';
  }
}

/** Talks to a cut proxy's control endpoint on 127.0.0.1:`port`. */
export class CutProxyClient {
  constructor(
    readonly port: number,
    private readonly timeoutMs = 5_000,
  ) {}

  /** Cuts `target` off; the proxy heals it by itself after `durationMs`. */
  cut(target: string, durationMs: number): Promise<{ target: string; durationMs: number; connections: number }> {
    return this.request('POST', '/cut', { target, durationMs });
  }

  /** Drops NATS deliveries to `target` on `subjects` (full patterns); the proxy ends it by itself after `durationMs`. */
  drop(target: string, subjects: readonly string[], durationMs: number): Promise<{ target: string; durationMs: number; subjects: string[]; connections: number }> {
    return this.request('POST', '/drop', { target, subjects, durationMs });
  }

  heal(target: string): Promise<HealReport> {
    return this.request('POST', '/heal', { target });
  }

  status(): Promise<RelayStatus> {
    return this.request('GET', '/status');
  }

  private async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const url = `http://127.0.0.1:${this.port}${path}`;
    let response: Response;
    try {
      response = await fetch(url, {
        method,
        signal: AbortSignal.timeout(this.timeoutMs),
        ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
      });
    } catch (error) {
      throw new CutProxyError(`the cut proxy at 127.0.0.1:${this.port} does not answer (${errorMessage(error)}); is the cluster up (\`lockfabric cluster status\`)?`);
    }
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new CutProxyError(`the cut proxy at 127.0.0.1:${this.port} answered ${method} ${path} with something that is not JSON (HTTP ${response.status})`);
    }
    if (!response.ok) {
      const reason = typeof parsed === 'object' && parsed !== null && 'error' in parsed ? String((parsed as { error: unknown }).error) : text;
      throw new CutProxyError(`the cut proxy refused ${method} ${path} (HTTP ${response.status}): ${reason}`);
    }
    return parsed as T;
  }
}
