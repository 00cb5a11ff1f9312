import { describe, expect, it } from 'vitest';
import type { FieldMeta } from '@/generated/fields';
import { initialActionValues } from './action-form-dialog';

const field = (path: string): FieldMeta => ({
  path,
  type: 'string',
  required: false,
  nullable: false,
  widget: 'text',
  order: 1,
  hidden: false,
  secret: false,
  column: false,
  card: false,
  filter: false,
});

describe('initialActionValues', () => {
  const list = [field('title'), field('body'), field('lang')];

  it('prefills from a top-level record field', () => {
    expect(
      initialActionValues({ prefill: { lang: 'language' } }, list, { language: 'ca' }),
    ).toEqual({
      lang: 'ca',
    });
  });

  it('prefills from a dotted path into a nested object, leaving out missing values', () => {
    const record = { disclaimer: { title: 'Rules', body: null }, title: 'record title' };
    expect(
      initialActionValues(
        {
          prefill: { title: 'disclaimer.title', body: 'disclaimer.body', lang: 'disclaimer.lang' },
        },
        list,
        record,
      ),
    ).toEqual({ title: 'Rules' });
  });
});
