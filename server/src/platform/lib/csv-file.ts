/**
 * The direct-viewer CSV of a deployment: RFC 4180 quoting, and no cell a spreadsheet would read as
 * a formula. A cell starting with `=`, `+`, `-`, `@`, a tab or a carriage return gets a leading
 * single quote; a cell holding a comma, a double quote, a carriage return or a line feed is quoted,
 * its double quotes doubled. Lines end with CRLF.
 */

const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]/;

/** One cell, neutralised and quoted as needed. */
export function csvCell(value: string | null | undefined): string {
  let text = value ?? '';
  if (FORMULA_START.test(text)) text = `'${text}`;
  return NEEDS_QUOTES.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** A whole file: the header line, then one line per row. */
export function csvFile(
  header: readonly string[],
  rows: readonly (readonly (string | null | undefined)[])[],
): string {
  return [header, ...rows].map((cells) => cells.map(csvCell).join(',')).join('\r\n') + '\r\n';
}

/** The CSV file name of a deployment: its id plus a fixed suffix (ASCII only: ids are). */
export function csvFileName(deploymentId: string): string {
  return `${deploymentId.replace(/[^A-Za-z0-9_-]/g, '_')}_direct_viewer.csv`;
}
