import type { KeyKind } from './config-keys.js';

/** One value for one key, and where it came from (for error messages). */
export interface Assignment {
  readonly path: readonly string[];
  readonly value: unknown;
  /** `config file x.json`, `LOCKFABRIC_NATS_URL`, `--nats.url`. */
  readonly source: string;
}

/** What reading one source produced: values, and problems found before validation. */
export interface SourceResult {
  readonly assignments: readonly Assignment[];
  readonly issues: readonly string[];
}

const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/**
 * Turns text from the environment or a flag into the key's type. Text that does not convert is
 * passed on unchanged, so validation reports it with the expectation of the key ("expected a
 * positive integer, got 'abc'") instead of a second, vaguer message here.
 */
export function coerce(kind: KeyKind, raw: string): unknown {
  switch (kind) {
    case 'number':
      return NUMBER.test(raw.trim()) ? Number(raw.trim()) : raw;
    case 'string-list':
      return raw
        .split(',')
        .map((item) => item.trim())
        .filter((item) => item !== '');
    case 'string':
      return raw;
  }
}
