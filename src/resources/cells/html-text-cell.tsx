import { Text } from '@mantine/core';
import { empty } from './empty-cell';
import type { CellProps } from './cell-types';

const BLOCKS = 'p, div, li, h1, h2, h3, h4, h5, h6, br, tr';

/**
 * The words of an HTML text (a disclaimer's body): the tags are read, not shown, and each block
 * starts a line. Parsed as an inert document (no script runs, nothing loads); nothing of it is
 * rendered as HTML.
 */
export function htmlToText(html: string): string {
  const doc = new DOMParser().parseFromString(html, 'text/html');
  for (const block of doc.body.querySelectorAll(BLOCKS)) block.append('\n');
  return (doc.body.textContent ?? '')
    .split('\n')
    .map((line) => line.replace(/\s+/g, ' ').trim())
    .filter(Boolean)
    .join('\n');
}

export function HtmlTextCell({ value }: CellProps) {
  if (typeof value !== 'string' || !value) return empty;
  const text = htmlToText(value);
  if (!text) return empty;
  return (
    <Text span size="sm" lineClamp={4} style={{ whiteSpace: 'pre-line' }} title={text}>
      {text}
    </Text>
  );
}
