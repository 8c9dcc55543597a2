import { describe, expect, it } from 'vitest';
import { runCli } from './cli.js';

// Duration options are in ns in every protocol (docs/architecture.md). A saved command line with an
// old name in ms or µs must stop with exit 2 and say what to type now, not run with a default.
describe('lockfabric --opt with an old duration name', () => {
  it('exits 2 naming the new option, its unit and the value in ns, listing every problem', async () => {
    const { code, stdout, stderr } = await runCli(['bench', '--protocol', 'netlock', '--opt', 'retransmitMs=5', '--opt', 'pushBackUs=20', '--opt', 'leaseMs=1']);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toMatch(/netlock option retransmitMs was renamed retransmitNs \(nanoseconds\): retransmitNs=5000000/);
    expect(stderr).toMatch(/netlock option pushBackUs was renamed pushBackNs \(nanoseconds\): pushBackNs=20000/);
    // netlock has no lease: an old name of another protocol's option is just unknown here.
    expect(stderr).toMatch(/netlock has no option "leaseMs"/);
    expect(stderr).not.toMatch(/\n\s+at /);
  });

  it('with several protocols, names the new option once for all of them; the new name runs', async () => {
    const old = await runCli(['check', '--protocol', 'dslr', '--seeds', '1', '--opt', 'leaseMs=5']);
    expect(old.code).toBe(2);
    expect(old.stderr).toMatch(/dslr option leaseMs was renamed leaseNs \(nanoseconds\): leaseNs=5000000/);
    const both = await runCli(['bench', '--protocol', 'dslr,shiftlock', '--opt', 'leaseMs=0.5']);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/--opt leaseMs was renamed leaseNs \(nanoseconds\): leaseNs=500000/);
    const renamed = await runCli(['check', '--protocol', 'dslr', '--seeds', '1', '--opt', 'leaseNs=5000000', '--json']);
    expect(renamed.code, renamed.stderr).toBe(0);
  });
});
