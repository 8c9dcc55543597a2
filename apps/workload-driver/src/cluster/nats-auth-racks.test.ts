import { createSubjects } from '@lockfabric/live';
import { describe, expect, it } from 'vitest';
import { permissionsFor } from './nats-auth.js';

const subjects = createSubjects('racks');

describe('NATS permissions of a multi-rack cluster (FissLock §5.4)', () => {
  it('a compute node of a two-rack cluster may publish into both racks’ switches; of a one-rack cluster, into its own only', () => {
    const multi = permissionsFor(subjects, { role: 'compute', id: '2', rack: 1, switchRacks: [0, 1] }).publish;
    expect(multi).toContain(subjects.switchIn(0));
    expect(multi).toContain(subjects.switchIn(1));
    const single = permissionsFor(subjects, { role: 'compute', id: '2', rack: 1 }).publish;
    expect(single).toContain(subjects.switchIn(1));
    expect(single).not.toContain(subjects.switchIn(0));
  });

  it('a switch still subscribes to its own rack’s input only', () => {
    const sw = permissionsFor(subjects, { role: 'switch', id: '4', rack: 1 }).subscribe;
    expect(sw).toContain(subjects.switchIn(1));
    expect(sw).not.toContain(subjects.switchIn(0));
  });
});
