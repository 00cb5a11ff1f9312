import { describe, expect, it } from 'vitest';
import { actionOf } from '@common/state-actions';
import { optionsFromAnswer } from '../form/operation-options';
import { previewItems } from './action-preview';
import { actionHref, availableActions } from './available-actions';
import { operationInputs } from './operation-inputs';

const template = { id: 't1', name: 'Base', enabled: true, editable: true, status: 'ready' };

describe('operationInputs', () => {
  it('sends a fixed body with the id the action fills (enable a template)', () => {
    const def = actionOf('templates', 'enable') ?? {};
    expect(operationInputs('templates', 'update', def, template)).toEqual({
      params: {},
      body: { enabled: true, id: 't1' },
    });
  });

  it('puts a filled input in the path and, when the body has it, in the body too', () => {
    const def = { operation: 'duplicate', fill: { template_id: 'id' } };
    expect(operationInputs('templates', 'duplicate', def, template, { name: 'Copy' })).toEqual({
      params: { template_id: 't1' },
      body: { template_id: 't1', name: 'Copy' },
    });
  });

  it('keeps path parameters out of a body that does not have them (delete has none)', () => {
    const def = actionOf('templates', 'delete') ?? {};
    expect(operationInputs('templates', 'delete', def, template)).toEqual({
      params: { id: 't1' },
      body: undefined,
    });
  });

  it('takes the form values as path parameters when the operation has no body', () => {
    const def = actionOf('storage', 'increase') ?? {};
    const inputs = operationInputs(
      'storage',
      'increase',
      def,
      { id: 'd1' },
      {
        increment: 2,
        priority: 'low',
      },
    );
    expect(inputs).toEqual({
      params: { id: 'd1', priority: 'low', increment: '2' },
      body: undefined,
    });
  });
});

describe('actionHref', () => {
  it('opens another resource route with the filled query (make template)', () => {
    const def = actionOf('desktops', 'template') ?? {};
    expect(actionHref('desktops', def, { id: 'd 1' })).toBe('/templates/new?desktop_id=d+1');
  });

  it('offers a route of another resource only to roles its operations allow', () => {
    const desktop = { id: 'd1', state: 'stopped', type: 'persistent' };
    const names = (role: 'user' | 'advanced') =>
      availableActions('desktops', desktop, role).map((action) => action.name);
    expect(names('advanced')).toContain('template');
    expect(names('user')).not.toContain('template');
  });

  it('offers nothing on a shared template the caller cannot edit', () => {
    expect(availableActions('templates', { ...template, editable: false }, 'advanced')).toEqual([]);
    expect(availableActions('templates', template, 'advanced').map((a) => a.name)).toContain(
      'edit',
    );
  });
});

describe('previewItems', () => {
  it('lists the named items of every array and counts those the caller may not see', () => {
    const { items, hidden } = previewItems({
      domains: [{ id: 'd1', name: 'Desk', kind: 'desktop', user: 'ann' }, {}],
      deployments: [],
      pending: false,
    });
    expect(items.map((item) => [item.name, item.kind, item.owner])).toEqual([
      ['Desk', 'desktop', 'ann'],
    ]);
    expect(hidden).toBe(1);
  });
});

describe('optionsFromAnswer', () => {
  it('maps list items to choices by id and name, skipping items without an id', () => {
    expect(optionsFromAnswer([{ id: 'a', name: 'A' }, { name: 'no id' }, { id: 2 }])).toEqual([
      { value: 'a', label: 'A' },
      { value: '2', label: '2' },
    ]);
    expect(optionsFromAnswer({ not: 'a list' })).toEqual([]);
  });

  it('keeps only the items optionsWhen admits (the stopped desktops)', () => {
    const desktops = [
      { id: 'a', name: 'A', state: 'stopped' },
      { id: 'b', name: 'B', state: 'started' },
    ];
    expect(optionsFromAnswer(desktops, { state: ['stopped'] })).toEqual([
      { value: 'a', label: 'A' },
    ]);
  });
});
