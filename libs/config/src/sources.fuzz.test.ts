import { bytesTarget, fc, footprint, fuzzDecoder, FuzzFailure, untrustedBytes, type DecoderTarget } from '@lockfabric/testkit';
import { describe, expect, it } from 'vitest';
import { CONFIG_KEYS } from './config-keys.js';
import { loadConfig } from './load-config.js';
import type { Env } from './env-source.js';

/**
 * The config file and LOCKFABRIC_* environment are untrusted text (a Kubernetes ConfigMap, a
 * hand-edited file). Whatever they hold, loading yields a Config or one ConfigError listing the
 * problems, never a stack trace (the CLI's exit-2 contract).
 */
interface Input {
  readonly text: string;
  readonly env: Env;
}

const leafValue = fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.integer(), fc.string({ maxLength: 12 }), fc.constantFrom('compute', '0', '-1', '1e309', 'true', 'a,b'));

/** An environment variable holds text: a JSON value's text (String() throws on a null-prototype object). */
const asEnvText = (value: unknown): string => (typeof value === 'string' ? value : (JSON.stringify(value) ?? 'null'));

/** A file with some known keys (nested as the schema nests them) and random values. */
const fileText = fc
  .array(fc.tuple(fc.constantFrom(...CONFIG_KEYS.map((k) => k.path)), leafValue), { maxLength: 6 })
  .map((entries) => {
    const doc: Record<string, unknown> = {};
    for (const [path, value] of entries) {
      let node = doc;
      for (const part of path.slice(0, -1)) node = (node[part] ??= {}) as Record<string, unknown>;
      node[path[path.length - 1] as string] = value;
    }
    return JSON.stringify(doc);
  });
const mutatedText = untrustedBytes(fileText.map((t) => new TextEncoder().encode(t))).map((b) => new TextDecoder().decode(b));
const env = fc.dictionary(fc.oneof(fc.constantFrom(...CONFIG_KEYS.map((k) => k.env)), fc.string({ maxLength: 10 }).map((s) => `LOCKFABRIC_${s}`)), fc.oneof(fc.string({ maxLength: 12 }), leafValue.map(asEnvText)), { maxKeys: 6 });

const inputSize = ({ text, env: e }: Input): number => text.length + Object.entries(e).reduce((n, [k, v]) => n + k.length + (v?.length ?? 0), 0);

function load(input: Input) {
  return loadConfig({ role: 'compute', env: input.env, file: 'fuzz.json', readText: () => input.text });
}

/** The defaults are fixed-size; only what the input adds counts against the bound. */
const defaults = footprint(loadConfig({ role: 'compute', env: {} }));

const configTarget: DecoderTarget<Input> = {
  name: 'config file and environment',
  decode: load,
  outputSize: (config) => footprint(config) - defaults,
  inputs: fc.record({ text: fc.oneof(fileText, mutatedText), env }),
  inputSize,
};

describe('config sources under fuzzing', () => {
  it('config file and environment: a Config or one ConfigError', () => {
    fuzzDecoder(configTarget);
  });

  it('catches a file source that parses JSON without a guard (mutant)', () => {
    const mutant = bytesTarget('unguarded config file', (b) => {
      const text = new TextDecoder().decode(b);
      JSON.parse(text);
      return load({ text, env: {} });
    });
    expect(() => fuzzDecoder(mutant, { runs: 300, seed: 11 })).toThrow(FuzzFailure);
  });
});
