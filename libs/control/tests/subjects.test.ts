import { describe, expect, it } from 'vitest';
import { queueRecoverySubject } from '../src/queue-lock-recovery/bus-queue-participant.js';
import { createSubjects, SubjectTokenError } from '../src/subjects.js';

describe('subjects', () => {
  const s = createSubjects('prod-1');

  it('builds every subject of DESIGN §4 under lf.<cluster>', () => {
    expect(s.prefix).toBe('lf.prod-1');
    expect(s.switchIn(0)).toBe('lf.prod-1.sw.0.in');
    expect(s.nodePackets(12)).toBe('lf.prod-1.node.12.pkt');
    expect(s.nodeMessages(12, 3)).toBe('lf.prod-1.node.12.msg.3');
    expect(s.nodeInbox(12)).toBe('lf.prod-1.node.12.msg.*');
    expect(s.nodeOutbox(3)).toBe('lf.prod-1.node.*.msg.3');
    expect(s.heartbeat('memory', 'mn-0')).toBe('lf.prod-1.hb.memory.mn-0');
    expect(s.heartbeatAll()).toBe('lf.prod-1.hb.*.*');
    expect(s.membership()).toBe('lf.prod-1.ctl.membership');
    expect(s.membershipRecall()).toBe('lf.prod-1.ctl.membership.recall');
    expect(s.recovery('s2')).toBe('lf.prod-1.ctl.recovery.s2');
    expect(s.recoveryAll()).toBe('lf.prod-1.ctl.recovery.*');
    expect(s.fault('sw-0')).toBe('lf.prod-1.ctl.fault.sw-0');
    expect(s.faultAll()).toBe('lf.prod-1.ctl.fault.*');
    expect(s.driver('run-7')).toBe('lf.prod-1.driver.run-7');
    expect(s.raw('ping')).toBe('lf.prod-1.raw.ping');
    expect(s.recoveryCall('fiss', 3, 'pause')).toBe('lf.prod-1.ctl.fiss.3.pause');
    expect(s.recoveryCallsTo(3)).toBe('lf.prod-1.ctl.*.3.*');
    expect(s.switchAnnounce()).toBe('lf.prod-1.ctl.switch');
    expect(s.switchAdmission()).toBe('lf.prod-1.ctl.switch.admit');
    expect(s.protocolReport('fiss', 'stuck')).toBe('lf.prod-1.ctl.report.fiss.stuck');
    expect(s.protocolReportAll()).toBe('lf.prod-1.ctl.report.>');
  });

  it('sends queue-lock recovery as recovery calls of family queue, so a host needs no second subscription', () => {
    expect(queueRecoverySubject(s, 3, 'gate')).toBe('lf.prod-1.ctl.queue.3.gate');
    expect(queueRecoverySubject(s, 3, 'reset')).toBe(s.recoveryCall('queue', 3, 'reset'));
  });

  it.each([
    ['a cluster with a dot', () => createSubjects('a.b')],
    ['an empty cluster', () => createSubjects('')],
    ['a wildcard role', () => s.heartbeat('*', 'x')],
    ['a full wildcard id', () => s.heartbeat('memory', '>')],
    ['a space in a target', () => s.fault('sw 0')],
    ['a negative machine', () => s.nodePackets(-1)],
    ['a fractional rack', () => s.switchIn(1.5)],
    ['a wildcard recovery verb', () => s.recoveryCall('fiss', 1, '*')],
    ['a recovery family that is a control subject of its own', () => s.recoveryCall('switch', 1, 'pause')],
    ['a wildcard report name', () => s.protocolReport('fiss', '>')],
  ])('rejects %s', (_name, build) => {
    expect(build).toThrow(SubjectTokenError);
  });
});
