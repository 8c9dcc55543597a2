import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomHistory } from '../tests/support/random-history.js';
import { HistoryFormatError } from './errors.js';
import type { HistoryEvent } from './history.js';
import { formatHistoryEvent, parseHistoryJsonl, readHistoryJsonl, writeHistoryJsonl } from './jsonl.js';

const sample: HistoryEvent[] = [
  { client: '3/17', lock: 4, mode: 'exclusive', op: 'acquire', phase: 'invoke', timeNs: 100 },
  { client: '3/17', lock: 4, mode: 'exclusive', op: 'acquire', phase: 'fail', timeNs: 250.25, error: 'LockTimeoutError' },
  { client: '2/1', lock: 0, mode: 'shared', op: 'release', phase: 'ok', timeNs: 1e15 },
];

describe('JSON lines', () => {
  let dir = '';
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lf-check-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('writes one event per line with exactly the event fields, in a fixed order', async () => {
    const path = join(dir, 'h.jsonl');
    await writeHistoryJsonl(sample, path);
    const lines = (await readFile(path, 'utf8')).split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[3]).toBe('');
    expect(lines[0]).toBe('{"client":"3/17","lock":4,"mode":"exclusive","op":"acquire","phase":"invoke","timeNs":100}');
    expect(Object.keys(JSON.parse(lines[1] as string))).toEqual(['client', 'lock', 'mode', 'op', 'phase', 'timeNs', 'error']);
  });

  it('round-trips a history through a file and through streams', async () => {
    const history = randomHistory({ seed: 3, clients: 8, locks: 4, opsPerClient: 200 });
    const path = join(dir, 'big.jsonl');
    await writeHistoryJsonl(history, path);
    expect(await readHistoryJsonl(path)).toEqual(history);

    const stream = new PassThrough();
    const collected: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => collected.push(chunk));
    await writeHistoryJsonl(sample, stream);
    stream.end();
    const text = Buffer.concat(collected).toString('utf8');
    expect(await readHistoryJsonl(Readable.from([text]))).toEqual(sample);
    expect(parseHistoryJsonl(text)).toEqual(sample);
  });

  it('reports malformed lines with their line number', async () => {
    const good = formatHistoryEvent(sample[0] as HistoryEvent);
    const cases: [string, RegExp][] = [
      [`${good}\n\n{"client":"1/1","lock":`, /not valid JSON/],
      [`${good}\n\n${good.replace('"exclusive"', '"upgrade"')}`, /"mode" must be one of/],
      [`${good}\n\n${good.replace(',"timeNs":100', '')}`, /"timeNs" must be a finite number/],
      [`${good}\n\n${good.replace('}', ',"extra":1}')}`, /unknown field "extra"/],
      [`${good}\n\n[1,2]`, /expected a JSON object/],
      [`${good}\n\n${good.replace('"lock":4', '"lock":-4')}`, /"lock" must be a non-negative integer/],
      [`${good}\n\n${good.replace('}', ',"error":7}')}`, /"error" must be a string/],
    ];
    for (const [text, message] of cases) {
      const path = join(dir, 'bad.jsonl');
      await writeFile(path, text);
      const error = await readHistoryJsonl(path).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(HistoryFormatError);
      expect((error as HistoryFormatError).line).toBe(3);
      expect((error as HistoryFormatError).message).toMatch(message);
      expect((error as HistoryFormatError).message).toContain(`${path}:3:`);
      expect(() => parseHistoryJsonl(text, 'mem')).toThrow(/^mem:3: /);
    }
  });
});
