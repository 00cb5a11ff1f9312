import '@mantine/core/styles/Code.css';
import { Code, Text } from '@mantine/core';
import { useCellText } from './cell-text';
import { empty } from './empty-cell';
import type { CellProps } from './cell-types';

/** A key of a JSON value, and the value as text (nested values as indented JSON). */
function jsonEntries(value: object): [string, string, boolean][] {
  const entries = Array.isArray(value)
    ? value.map((item, index) => [String(index), item] as const)
    : Object.entries(value);
  return entries.map(([key, item]) =>
    item !== null && typeof item === 'object'
      ? [key, JSON.stringify(item, null, 2), true]
      : [key, item === undefined ? '' : JSON.stringify(item), false],
  );
}

/**
 * A JSON value (a record before and after a change): its keys and values one per line, nested
 * values as indented JSON; folded under a summary ("12 fields") that opens it, open at first when
 * it is short.
 */
export function JsonCell({ value }: CellProps) {
  const { t } = useCellText();
  if (value === undefined || value === null) return empty;
  if (typeof value !== 'object')
    return <Code data-testid="json-value">{JSON.stringify(value)}</Code>;
  const entries = jsonEntries(value);
  return (
    <details open={entries.length <= 12} data-testid="json-value">
      <summary style={{ cursor: 'pointer' }}>
        <Text span size="sm" c="dimmed">
          {t('common:json.fields', { count: entries.length })}
        </Text>
      </summary>
      <dl
        style={{
          display: 'grid',
          gridTemplateColumns: 'max-content minmax(0, 1fr)',
          gap: '2px 12px',
          margin: '4px 0 0',
        }}
      >
        {entries.map(([key, text, nested]) => (
          <div key={key} style={{ display: 'contents' }} data-json-key={key}>
            <dt>
              <Code>{key}</Code>
            </dt>
            <dd style={{ margin: 0, minWidth: 0 }}>
              {nested ? (
                <Code block style={{ whiteSpace: 'pre-wrap', wordBreak: 'break-word' }}>
                  {text}
                </Code>
              ) : (
                <Text span size="sm" style={{ wordBreak: 'break-word' }}>
                  {text}
                </Text>
              )}
            </dd>
          </div>
        ))}
      </dl>
    </details>
  );
}
