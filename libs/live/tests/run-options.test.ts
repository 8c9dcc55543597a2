import { ConfigError } from '@lockfabric/ports';
import { describe, expect, it } from 'vitest';
import { MUTANT_KEEP_OLD_RUN_VERBS_OPTION, MUTANT_LOCAL_VERBS_OPTION, SKIP_RELEASE_OPTION, hostRunOptions } from '../src/run-options.js';

describe('host run options', () => {
  it('are taken out of the protocol options', () => {
    const host = hostRunOptions({ backoff: 'true', [SKIP_RELEASE_OPTION]: '0.25', [MUTANT_LOCAL_VERBS_OPTION]: 'true', [MUTANT_KEEP_OLD_RUN_VERBS_OPTION]: 'true' });
    expect(host).toEqual({ protocol: { backoff: 'true' }, mutantLocalVerbs: true, mutantKeepOldRunVerbs: true, skipReleaseProbability: 0.25 });
    expect(hostRunOptions({})).toEqual({ protocol: {}, mutantLocalVerbs: false, mutantKeepOldRunVerbs: false, skipReleaseProbability: 0 });
  });

  it('refuse a skip probability outside [0, 1] with a ConfigError naming the option', () => {
    for (const bad of ['1.5', '-0.1', 'often', '']) {
      expect(() => hostRunOptions({ [SKIP_RELEASE_OPTION]: bad })).toThrow(ConfigError);
      expect(() => hostRunOptions({ [SKIP_RELEASE_OPTION]: bad })).toThrow(/skipReleaseProbability/);
    }
  });
});
