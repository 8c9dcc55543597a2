import { describe, expect, it } from 'vitest';
import { LINE_EVERY_MS, ProgressBar } from './progress.js';

function sink(isTTY: boolean) {
  const lines: string[] = [];
  return { lines, sink: { isTTY, write: (text: string) => lines.push(text) } };
}

describe('ProgressBar', () => {
  it('prints nothing off a terminal while a run is short', () => {
    let now = 1_000;
    const out = sink(false);
    const bar = new ProgressBar('check caslock', { sink: out.sink, nowMs: () => now });
    for (let i = 1; i <= 10; i++) {
      now += 500;
      bar.update(i / 10);
    }
    bar.done();
    expect(out.lines).toEqual([]);
  });

  it('prints a plain line per interval off a terminal once a run is long', () => {
    let now = 0;
    const out = sink(false);
    const bar = new ProgressBar('reproduce shiftlock', { sink: out.sink, nowMs: () => now });
    for (let i = 1; i <= 25; i++) {
      now += LINE_EVERY_MS / 4;
      bar.update(i / 30, `${i}/30 points`);
    }
    expect(out.lines).toEqual(['reproduce shiftlock: 13% 4/30 points\n', 'reproduce shiftlock: 27% 8/30 points\n', 'reproduce shiftlock: 40% 12/30 points\n', 'reproduce shiftlock: 53% 16/30 points\n', 'reproduce shiftlock: 67% 20/30 points\n', 'reproduce shiftlock: 80% 24/30 points\n']);
  });

  it('redraws one line in place on a terminal and clears it when done', () => {
    let now = 0;
    const out = sink(true);
    const bar = new ProgressBar('bench', { sink: out.sink, nowMs: () => now });
    bar.update(0.5);
    now += 200;
    bar.update(1);
    bar.done();
    expect(out.lines).toHaveLength(3);
    expect(out.lines[0]).toMatch(/^\rbench \[█{15}░{15}\] {2}50% /);
    expect(out.lines[2]).toBe('\r\x1b[K');
  });

  it('stays silent when disabled (JSON output)', () => {
    let now = 0;
    const out = sink(false);
    const bar = new ProgressBar('bench', { enabled: false, sink: out.sink, nowMs: () => now });
    now += LINE_EVERY_MS * 3;
    bar.update(0.5);
    expect(out.lines).toEqual([]);
  });
});
