/** Renders rows as an aligned text table; numbers right-aligned, everything else left-aligned. */
export function renderTable(headers: readonly string[], rows: readonly (readonly (string | number)[])[]): string {
  const cells = rows.map((row) => row.map((cell) => (typeof cell === 'number' ? formatNumber(cell) : cell)));
  const widths = headers.map((header, i) => Math.max(header.length, ...cells.map((row) => (row[i] ?? '').length)));
  const numeric = headers.map((_, i) => rows.every((row) => typeof row[i] === 'number'));
  const line = (row: readonly string[]) =>
    row.map((cell, i) => (numeric[i] ? cell.padStart(widths[i] ?? 0) : cell.padEnd(widths[i] ?? 0))).join('  ').trimEnd();
  return [line(headers), widths.map((w) => '─'.repeat(w)).join('  '), ...cells.map(line)].join('\n');
}

export function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  if (Number.isInteger(value)) return value.toLocaleString('en-US');
  const abs = Math.abs(value);
  return value.toFixed(abs >= 100 ? 0 : abs >= 10 ? 1 : 2);
}
