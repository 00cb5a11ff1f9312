import { describe, expect, it } from 'vitest';
import { filterRecords, sortRecords, warmFilter } from './list-filter';

const records = [
  { id: '1', name: 'Ubuntu', description: 'Dev box', type: 'persistent', state: 'started' },
  { id: '2', name: 'Windows', description: null, type: 'nonpersistent', state: 'stopped' },
  {
    id: '3',
    name: 'alpine',
    description: 'tiny ubuntu-like',
    type: 'persistent',
    state: 'stopped',
  },
];
const fields = ['name', 'description'];
const none = { text: '', tab: null, toggles: [] };

describe('filterRecords', () => {
  it('returns the same array when nothing filters', () => {
    expect(filterRecords(records, fields, none)).toBe(records);
  });

  it('matches the filter text case-insensitively over the filterable fields only', () => {
    expect(filterRecords(records, fields, { ...none, text: ' UBUNTU ' }).map((r) => r.id)).toEqual([
      '1',
      '3',
    ]);
    expect(filterRecords(records, fields, { ...none, text: 'persistent' })).toEqual([]);
  });

  it('applies the tab and every toggle', () => {
    const tab = { key: 'persistent', field: 'type', values: ['persistent'] };
    const started = { key: 'startedOnly', field: 'state', values: ['started'] };
    expect(filterRecords(records, fields, { ...none, tab }).map((r) => r.id)).toEqual(['1', '3']);
    expect(
      filterRecords(records, fields, { ...none, tab, toggles: [started] }).map((r) => r.id),
    ).toEqual(['1']);
  });

  it('sees a changed record once the live provider replaces the object', () => {
    warmFilter(records, fields);
    const changed = records.map((r) => (r.id === '1' ? { ...r, name: 'Debian' } : r));
    expect(filterRecords(changed, fields, { ...none, text: 'debian' }).map((r) => r.id)).toEqual([
      '1',
    ]);
  });
});

describe('sortRecords', () => {
  it('sorts naturally, missing values last, either way', () => {
    const rows = [{ n: 'b10' }, { n: null }, { n: 'B2' }, { n: 'a' }];
    expect(sortRecords(rows, { field: 'n', order: 'asc' }).map((r) => r.n)).toEqual([
      'a',
      'B2',
      'b10',
      null,
    ]);
    expect(sortRecords(rows, { field: 'n', order: 'desc' }).map((r) => r.n)).toEqual([
      'b10',
      'B2',
      'a',
      null,
    ]);
    expect(sortRecords(rows, null)).toBe(rows);
  });

  it('orders texts as the interface language does', () => {
    const rows = [{ n: 'oso' }, { n: 'ñu' }, { n: 'nube' }];
    const sort = { field: 'n', order: 'asc' } as const;
    expect(sortRecords(rows, sort, 'en').map((r) => r.n)).toEqual(['ñu', 'nube', 'oso']);
    expect(sortRecords(rows, sort, 'es').map((r) => r.n)).toEqual(['nube', 'ñu', 'oso']);
  });
});
