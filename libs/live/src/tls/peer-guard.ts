import { ServerInterceptingCall, status as GrpcStatus } from '@grpc/grpc-js';
import type { ServerInterceptor } from '@grpc/grpc-js';
import type { Clock } from '@lockfabric/ports';
import { NS_PER_MS } from '@lockfabric/ports';
import type { Logger } from '../logger.js';
import { ACCESS_POLICY, ruleFor } from './access-policy.js';
import type { MethodRule } from './access-policy.js';
import { describeIdentity, identityFromSubjectAltName } from './identity.js';
import type { ServiceIdentity } from './identity.js';

export type RefusalReason = 'no-identity' | 'wrong-role' | 'no-rule';

export interface Decision {
  readonly allowed: boolean;
  readonly code?: GrpcStatus;
  readonly reason?: RefusalReason;
  readonly message?: string;
  readonly rule?: MethodRule;
}

/**
 * The access decision for one call. `identity` is undefined both for an insecure server (then
 * `tlsOn` is false and only the rule's existence matters) and for a TLS peer whose certificate
 * names no lockfabric identity.
 */
export function decide(path: string, tlsOn: boolean, identity: ServiceIdentity | undefined, policy: Readonly<Record<string, MethodRule>> = ACCESS_POLICY): Decision {
  const rule = ruleFor(path, policy);
  if (!rule) return { allowed: false, code: GrpcStatus.PERMISSION_DENIED, reason: 'no-rule', message: `${path}: no access rule names this method` };
  if (!tlsOn) return { allowed: true, rule };
  if (!identity) {
    return { allowed: false, code: GrpcStatus.UNAUTHENTICATED, reason: 'no-identity', message: `${path}: the client certificate carries no spiffe://lockfabric/<role>/<node> identity` };
  }
  if (!rule.roles.includes(identity.role)) {
    return {
      allowed: false,
      code: GrpcStatus.PERMISSION_DENIED,
      reason: 'wrong-role',
      message: `${path}: role ${identity.role} may not call this (allowed: ${rule.roles.join(', ')})`,
    };
  }
  return { allowed: true, rule };
}

export interface PeerGuardOptions {
  readonly tlsOn: boolean;
  readonly logger: Logger;
  readonly clock: Clock;
  /** A refusing peer is logged at most once per interval. */
  readonly logIntervalMs?: number;
  readonly policy?: Readonly<Record<string, MethodRule>>;
}

/** Peers remembered for log rate-limiting at most; past it the memory starts over. */
const MAX_REMEMBERED_PEERS = 4_096;

/**
 * Checks every call on a server against the access policy before any handler runs: a refused
 * call ends with UNAUTHENTICATED/PERMISSION_DENIED, is counted by reason, and is logged once per
 * peer per interval; an allowed control write leaves an audit line naming the caller. The
 * certificate was already verified against the CA in the handshake; this reads who it names.
 */
export class PeerGuard {
  private readonly refusals = new Map<RefusalReason, number>();
  private readonly lastLoggedNs = new Map<string, number>();
  private readonly intervalNs: number;
  private auditLines = 0;

  constructor(private readonly options: PeerGuardOptions) {
    this.intervalNs = (options.logIntervalMs ?? 10_000) * NS_PER_MS;
  }

  get tlsOn(): boolean {
    return this.options.tlsOn;
  }

  readonly interceptor: ServerInterceptor = (method, call) => this.check(method, call, this.options.policy);

  /** The same guard (counts, log, audit) under another server's policy (DESCRIPTOR_ACCESS_POLICY). */
  interceptorFor(policy: Readonly<Record<string, MethodRule>>): ServerInterceptor {
    return (method, call) => this.check(method, call, policy);
  }

  private check(method: Parameters<ServerInterceptor>[0], call: Parameters<ServerInterceptor>[1], policy: Readonly<Record<string, MethodRule>> | undefined): ReturnType<ServerInterceptor> {
    const auth = call.getAuthContext();
    const identity = identityFromSubjectAltName(auth.sslPeerCertificate?.subjectaltname);
    const decision = decide(method.path, this.options.tlsOn, identity, policy);
    const peer = call.getPeer();
    if (decision.allowed) {
      if (decision.rule?.audit) this.audit(method.path, identity, peer);
      return new ServerInterceptingCall(call);
    }
    this.refuse(decision, peer, identity);
    // The refusal is sent once the client's metadata arrives; the handler is never started.
    return new ServerInterceptingCall(call, {
      start: (next) => {
        next({
          onReceiveMetadata: () => call.sendStatus({ code: decision.code ?? GrpcStatus.PERMISSION_DENIED, details: `refused: ${decision.message ?? method.path}` }),
        });
      },
    });
  }

  /** Refused calls by reason, or in total. */
  refused(reason?: RefusalReason): number {
    if (reason) return this.refusals.get(reason) ?? 0;
    let total = 0;
    for (const n of this.refusals.values()) total += n;
    return total;
  }

  refusedByReason(): Record<string, number> {
    return Object.fromEntries(this.refusals);
  }

  get audited(): number {
    return this.auditLines;
  }

  private audit(path: string, identity: ServiceIdentity | undefined, peer: string): void {
    this.auditLines++;
    const caller = identity ? describeIdentity(identity) : 'unauthenticated (tls.mode=insecure)';
    this.options.logger.info(`audit: ${caller} at ${peer} called ${path}`);
  }

  private refuse(decision: Decision, peer: string, identity: ServiceIdentity | undefined): void {
    const reason = decision.reason ?? 'no-rule';
    this.refusals.set(reason, (this.refusals.get(reason) ?? 0) + 1);
    // Keyed by identity when there is one: a peer's port changes with every connection.
    const key = identity ? describeIdentity(identity) : peer.replace(/:\d+$/, '');
    const now = this.options.clock.nowNs();
    const last = this.lastLoggedNs.get(key);
    if (last !== undefined && now - last < this.intervalNs) return;
    if (this.lastLoggedNs.size >= MAX_REMEMBERED_PEERS) this.lastLoggedNs.clear();
    this.lastLoggedNs.set(key, now);
    this.options.logger.warn(`refused a call from ${identity ? describeIdentity(identity) : 'a peer without identity'} at ${peer}: ${decision.message ?? reason}`);
  }
}
