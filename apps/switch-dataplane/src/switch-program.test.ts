import { ConfigError } from '@lockfabric/ports';
import { SWITCH_PROGRAMS } from '@lockfabric/config';
import { describe, expect, it } from 'vitest';
import { createSwitchProgram } from './switch-program.js';

describe('createSwitchProgram', () => {
  it('builds the forward program', () => {
    expect(createSwitchProgram('forward').name).toBe('forward');
  });

  it.each(['fisslock', 'netlock'])('rejects %s, which this build lacks, as a configuration error', (name) => {
    expect(SWITCH_PROGRAMS).toContain(name);
    expect(() => createSwitchProgram(name)).toThrow(ConfigError);
    expect(() => createSwitchProgram(name)).toThrow(`program ${name} is not available in this build`);
  });

  it('rejects a name no one knows', () => {
    expect(() => createSwitchProgram('bogus')).toThrow(/switch\.program: program bogus is not available/);
  });
});
