import { createReadStream, createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { HistoryFormatError } from './errors.js';
import { HISTORY_MODES, HISTORY_OPS, HISTORY_PHASES } from './history.js';
import type { HistoryEvent } from './history.js';

const FIELDS = new Set(['client', 'lock', 'mode', 'op', 'phase', 'timeNs', 'error']);
const CHUNK_CHARS = 64 * 1024;

/** One event as one JSON line (no newline), fields in the fixed order client, lock, mode, op, phase, timeNs, error. */
export function formatHistoryEvent(event: HistoryEvent): string {
  const { client, lock, mode, op, phase, timeNs, error } = event;
  return JSON.stringify(error === undefined ? { client, lock, mode, op, phase, timeNs } : { client, lock, mode, op, phase, timeNs, error });
}

/** The whole history as JSON lines, each terminated by '\n'. */
export function formatHistoryJsonl(events: Iterable<HistoryEvent>): string {
  let out = '';
  for (const event of events) out += formatHistoryEvent(event) + '\n';
  return out;
}

/**
 * Writes the history as JSON lines to a file path (created or truncated, closed when done) or to a
 * caller's stream (left open). Honours back-pressure, so millions of events do not pile up in memory.
 */
export async function writeHistoryJsonl(events: Iterable<HistoryEvent>, target: string | Writable): Promise<void> {
  const stream = typeof target === 'string' ? createWriteStream(target) : target;
  const failure = new Promise<never>((_, reject) => stream.once('error', reject));
  failure.catch(() => {});
  const write = async (chunk: string) => {
    if (!stream.write(chunk)) await Promise.race([once(stream, 'drain'), failure]);
  };
  let chunk = '';
  for (const event of events) {
    chunk += formatHistoryEvent(event) + '\n';
    if (chunk.length >= CHUNK_CHARS) {
      await write(chunk);
      chunk = '';
    }
  }
  if (chunk.length > 0) await write(chunk);
  if (typeof target === 'string') {
    stream.end();
    await Promise.race([once(stream, 'finish'), failure]);
  }
}

/** Parses one JSON line; `line` is 1-based and only used in the error. */
export function parseHistoryLine(text: string, line: number, source = 'history'): HistoryEvent {
  const fail = (detail: string): never => {
    throw new HistoryFormatError(source, line, detail);
  };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return fail(`not valid JSON (${(error as Error).message})`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return fail('expected a JSON object');
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record)) if (!FIELDS.has(key)) fail(`unknown field "${key}"`);
  const { client, lock, mode, op, phase, timeNs, error } = record;
  if (typeof client !== 'string' || client.length === 0) fail('"client" must be a non-empty string');
  if (typeof lock !== 'number' || !Number.isInteger(lock) || lock < 0) fail('"lock" must be a non-negative integer');
  if (!(HISTORY_MODES as readonly unknown[]).includes(mode)) fail(`"mode" must be one of ${HISTORY_MODES.join(', ')}`);
  if (!(HISTORY_OPS as readonly unknown[]).includes(op)) fail(`"op" must be one of ${HISTORY_OPS.join(', ')}`);
  if (!(HISTORY_PHASES as readonly unknown[]).includes(phase)) fail(`"phase" must be one of ${HISTORY_PHASES.join(', ')}`);
  if (typeof timeNs !== 'number' || !Number.isFinite(timeNs)) fail('"timeNs" must be a finite number');
  if (error !== undefined && typeof error !== 'string') fail('"error" must be a string when present');
  const event = { client, lock, mode, op, phase, timeNs } as HistoryEvent;
  return error === undefined ? event : { ...event, error: error as string };
}

/** Parses JSON lines held in memory; blank lines are skipped. */
export function parseHistoryJsonl(text: string, source = 'history'): HistoryEvent[] {
  const events: HistoryEvent[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] as string).trim();
    if (line.length > 0) events.push(parseHistoryLine(line, i + 1, source));
  }
  return events;
}

/** Reads JSON lines from a file path or a stream, line by line; blank lines are skipped. */
export async function readHistoryJsonl(source: string | Readable, sourceName?: string): Promise<HistoryEvent[]> {
  const input = typeof source === 'string' ? createReadStream(source, { encoding: 'utf8' }) : source;
  const name = sourceName ?? (typeof source === 'string' ? source : 'history');
  const lines = createInterface({ input, crlfDelay: Infinity });
  const events: HistoryEvent[] = [];
  let lineNumber = 0;
  try {
    for await (const raw of lines) {
      lineNumber++;
      const line = raw.trim();
      if (line.length > 0) events.push(parseHistoryLine(line, lineNumber, name));
    }
  } finally {
    lines.close();
    if (typeof source === 'string') input.destroy();
  }
  return events;
}
