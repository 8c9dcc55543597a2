import { describe, expect, it } from 'vitest';
import { PacketAdmission, parseEpochStamp } from './admission.js';

describe('switch admission (the recovery fence of stamped lock packets)', () => {
  it('starts closed: stamped packets are dropped and counted, unstamped ones pass', () => {
    const a = new PacketAdmission();
    expect(a.state).toStrictEqual({ open: false, epoch: 0n });
    expect(a.admit(5n)).toBe('closed');
    expect(a.admit(undefined)).toBe('pass');
    expect(a.dropsByReason()).toStrictEqual({ closed: 1 });
  });

  it('open at an epoch: that epoch and newer pass, older ones are stale', () => {
    const a = new PacketAdmission();
    expect(a.order(7n, true)).toBe(true);
    expect(a.admit(7n)).toBe('pass');
    expect(a.admit(9n)).toBe('pass');
    expect(a.admit(6n)).toBe('stale-epoch');
    expect(a.dropsByReason()).toStrictEqual({ 'stale-epoch': 1 });
  });

  it('a recovery closes it at its epoch and opens it after S3; the epoch never goes down', () => {
    const a = new PacketAdmission();
    a.order(7n, true);
    expect(a.order(8n, false)).toBe(true); // S1 of the recovery at epoch 8
    expect(a.admit(8n)).toBe('closed');
    expect(a.order(7n, true)).toBe(false); // a late order of an older epoch changes nothing
    expect(a.state).toStrictEqual({ open: false, epoch: 8n });
    expect(a.order(8n, true)).toBe(true); // after S3
    expect(a.admit(7n)).toBe('stale-epoch');
    expect(a.admit(8n)).toBe('pass');
    expect(a.order(8n, true)).toBe(false); // repeated: no change
  });

  it('reads the header: decimal digits only; anything else is unstamped', () => {
    expect(parseEpochStamp('12')).toBe(12n);
    expect(parseEpochStamp(undefined)).toBeUndefined();
    expect(parseEpochStamp('')).toBeUndefined();
    expect(parseEpochStamp('-1')).toBeUndefined();
    expect(parseEpochStamp('1e3')).toBeUndefined();
  });
});
