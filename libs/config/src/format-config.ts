import { CONFIG_KEYS } from './config-keys.js';
import type { Config } from './schema.js';

/**
 * The configuration as printed at start: one `key = value` line per key in schema order, values as
 * JSON, `(unset)` for optional keys without a value. Passwords and tokens inside URLs are masked,
 * so the line can go to logs.
 */
export function formatConfig(config: Config): string {
  return CONFIG_KEYS.map(({ path, key }) => `${key} = ${formatValue(valueAt(config, path))}`).join('\n');
}

function valueAt(config: Config, path: readonly string[]): unknown {
  let node: unknown = config;
  for (const segment of path) node = (node as Record<string, unknown> | undefined)?.[segment];
  return node;
}

function formatValue(value: unknown): string {
  if (value === undefined) return '(unset)';
  if (typeof value === 'string') return JSON.stringify(redactUrls(value));
  if (Array.isArray(value)) return `[${value.map(formatValue).join(', ')}]`;
  return JSON.stringify(value);
}

/** `nats://user:secret@host` → `nats://user:***@host`; `nats://token@host` → `nats://***@host`. */
export function redactUrls(value: string): string {
  return value
    .split(',')
    .map((part) => {
      const match = /^(\s*[a-z][a-z0-9+.-]*:\/\/)([^@/]*)@(.*)$/i.exec(part);
      if (!match) return part;
      const [, scheme, userinfo, rest] = match;
      const colon = (userinfo ?? '').indexOf(':');
      const masked = colon >= 0 ? `${(userinfo ?? '').slice(0, colon)}:***` : '***';
      return `${scheme}${masked}@${rest}`;
    })
    .join(',');
}
