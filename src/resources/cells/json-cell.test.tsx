import { cleanup, screen } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import type { FieldMeta } from '@/generated/fields';
import { renderWithProviders } from '../form/test-utils';
import { cellNameOf, FieldValue, hasCell } from './cell-registry';

const meta: FieldMeta = {
  path: 'after',
  type: 'object',
  required: false,
  nullable: true,
  widget: 'json',
  order: 1,
  hidden: false,
  secret: false,
  column: false,
  card: false,
  filter: false,
};

describe('the json cell', () => {
  afterEach(cleanup);

  it('is registered under the name the schema uses, as is the date-time cell', () => {
    expect(cellNameOf(meta)).toBe('json');
    expect(hasCell('json')).toBe(true);
    expect(hasCell('date')).toBe(true);
  });

  it('shows each key with its value, nested values as indented JSON, open when short', () => {
    const after = { name: 'Ada', active: false, quota: { desktops: 5 }, email: null };
    renderWithProviders(<FieldValue resource="audit" meta={meta} record={{ after }} />);
    const block = screen.getByTestId('json-value');
    expect(block).toHaveAttribute('open');
    expect(block.querySelector('summary')).toHaveTextContent('4 fields');
    expect(block.querySelector('[data-json-key="name"]')).toHaveTextContent('name"Ada"');
    expect(block.querySelector('[data-json-key="active"]')).toHaveTextContent('false');
    expect(block.querySelector('[data-json-key="email"]')).toHaveTextContent('null');
    expect(block.querySelector('[data-json-key="quota"] pre')?.textContent).toBe(
      '{\n  "desktops": 5\n}',
    );
  });

  it('folds a long record and shows a dash for none', () => {
    const long = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, i]));
    renderWithProviders(<FieldValue resource="audit" meta={meta} record={{ after: long }} />);
    expect(screen.getByTestId('json-value')).not.toHaveAttribute('open');
    cleanup();
    renderWithProviders(<FieldValue resource="audit" meta={meta} record={{ after: null }} />);
    expect(screen.queryByTestId('json-value')).toBeNull();
    expect(document.body).toHaveTextContent('—');
  });
});
