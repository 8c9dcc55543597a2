import { ConfigError } from '@lockfabric/ports';
import { SWITCH_PROGRAMS } from '@lockfabric/config';
import { describe, expect, it } from 'vitest';
import { createSwitchProgram } from './switch-program.js';

describe('createSwitchProgram', () => {
  it('builds the forward program', () => {
    expect(createSwitchProgram('forward').name).toBe('forward');
  });

  it.each(['fisslock', 'netlock'])('builds the %s program every config may name', (name) => {
    expect(SWITCH_PROGRAMS).toContain(name);
    expect(createSwitchProgram(name).name).toBe(name);
  });

  it('rejects a name no one knows, as a configuration error', () => {
    expect(() => createSwitchProgram('bogus')).toThrow(ConfigError);
    expect(() => createSwitchProgram('bogus')).toThrow(/switch\.program: program bogus is not available/);
  });
});
