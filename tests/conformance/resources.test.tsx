/**
 * One suite run over every generated resource whose screens are built: each name the schema
 * uses resolves in its registry (cells, cards, action handlers, icons, widgets, form
 * extensions), the list shows the declared columns and its records, the details screen shows its
 * fields, each role is offered only actions it may call, and state actions follow the state.
 */
import { cleanup, fireEvent, screen, within } from '@testing-library/react';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { BaseRecord } from '@refinedev/core';
import '@/app/registrations';
import '@/app/form-pages';
import { operations, type Operation } from '@/generated/api';
import { fields, formExtensions, type FieldMeta } from '@/generated/fields';
import { resourceList, type ResourceDefinition } from '@/generated/resources';
import type { Role } from '@/generated/types';
import { hasIcon } from '@/components/icon';
import { machineOf } from '@common/state-actions';
import { hasActionHandler } from '@/resources/actions/action-registry';
import { availableActions, routeBuilt } from '@/resources/actions/available-actions';
import { RecordActions } from '@/resources/actions/record-actions';
import { hasCard } from '@/resources/cards/card-registry';
import { cellNameOf, hasCell } from '@/resources/cells/cell-registry';
import { resolveFormExtension } from '@/resources/form/form-extension-registry';
import { baseWidgets, widgetNameOf } from '@/resources/form/widget-registry';
import { cardFields, tableColumns } from '@/resources/list/list-columns';
import { ResourceListPage } from '@/resources/list/resource-list-page';
import { ResourceShowPage } from '@/resources/show/resource-show-page';
import { renderEngine, stubLayout } from '@/resources/testing/engine-test-wrapper';
import { testI18n } from '@/resources/form/test-utils';

const ROLES: readonly Role[] = ['admin', 'manager', 'advanced', 'user'];
const fieldsOf = (type: string | null): readonly FieldMeta[] =>
  type ? ((fields as Readonly<Record<string, readonly FieldMeta[]>>)[type] ?? []) : [];
const label = (resource: string, path: string) =>
  testI18n.t(`resources:${resource}.fields.${path}`);

/** A record of a list or show type with a plausible value in every field. */
function sample(resource: ResourceDefinition, type: string | null, id: string): BaseRecord {
  const record: Record<string, unknown> = { id };
  for (const meta of fieldsOf(type)) {
    if (meta.path.includes('.') || meta.path === 'id') continue;
    const cell = cellNameOf(meta);
    record[meta.path] =
      cell === 'epochDate'
        ? 1_700_000_000
        : cell === 'wireDate'
          ? '2026-11-23T10:00+0000'
          : meta.enum
            ? meta.enum[0]
            : meta.type === 'number' || meta.type === 'integer'
              ? 3
              : meta.type === 'boolean'
                ? true
                : meta.type === 'array'
                  ? []
                  : meta.type === 'object'
                    ? {}
                    : `${meta.path} ${id}`;
  }
  const machine = machineOf(resource.name);
  if (machine) record[machine.field] = machine.states[0];
  const title = resource.meta.list?.title ?? 'name';
  record[title] = `Record ${id}`;
  return record;
}

let restoreLayout: () => void;
beforeAll(() => {
  restoreLayout = stubLayout();
});
afterAll(() => restoreLayout());
afterEach(() => {
  cleanup();
  localStorage.clear();
});

const builtLists = resourceList.filter((r) => routeBuilt(r.name, 'list'));

it('covers the resources whose list screen is built (desktops, recycle bin)', () => {
  expect(builtLists.map((r) => r.name)).toEqual(
    expect.arrayContaining(['desktops', 'recycle-bins']),
  );
});

describe.each(builtLists.map((r) => [r.name, r] as const))('%s', (name, resource) => {
  const list = resource.meta.list ?? {};

  it('has a renderer for every column and card field, for every role', () => {
    for (const role of ROLES)
      for (const meta of [...tableColumns(name, role), ...cardFields(name, role)])
        expect(hasCell(cellNameOf(meta)), `${meta.path}: ${cellNameOf(meta)}`).toBe(true);
  });

  it('names only registered cards, action handlers and icons', () => {
    if ((list.views ?? [list.view]).includes('cards')) expect(hasCard(list.card ?? '')).toBe(true);
    const machine = machineOf(name);
    for (const [action, def] of Object.entries(machine?.actions ?? {})) {
      if (def.handler)
        expect(hasActionHandler(def.handler), `${action} handler ${def.handler}`).toBe(true);
      if (def.icon) expect(hasIcon(def.icon), `${action} icon ${def.icon}`).toBe(true);
    }
    if (list.empty?.icon) expect(hasIcon(list.empty.icon)).toBe(true);
  });

  it('shows the declared columns and every record in the table', async () => {
    localStorage.setItem(`view:${name}`, 'table');
    const records = [
      sample(resource, resource.meta.types.list, 'r1'),
      sample(resource, resource.meta.types.list, 'r2'),
    ];
    renderEngine(<ResourceListPage resource={name} />, { records: { [name]: records } });
    const table = await screen.findByRole('table');
    for (const meta of tableColumns(name, 'user'))
      expect(
        within(table).getByRole('columnheader', { name: label(name, meta.path) }),
      ).toBeInTheDocument();
    expect(within(table).getAllByTestId('record')).toHaveLength(2);
  });

  it('offers each role only actions whose operation it may call, in every state', () => {
    const machine = machineOf(name);
    for (const state of machine?.states ?? [])
      for (const role of ROLES) {
        const record = {
          ...sample(resource, resource.meta.types.list, 'r1'),
          [machine?.field ?? 'state']: state,
        };
        for (const { name: action, def } of availableActions(name, record, role)) {
          if (!def.operation) continue;
          const op = (operations as Readonly<Record<string, Operation>>)[
            `${name}.${def.operation}`
          ];
          expect(op?.planned, `${action} in ${state}`).toBe(false);
          expect(
            op?.roles === null || op?.roles.includes(role),
            `${role}: ${action} in ${state}`,
          ).toBe(true);
        }
      }
  });

  if (routeBuilt(name, 'show'))
    it('shows the details of a record with its fields', async () => {
      const record = sample(resource, resource.meta.types.show, 'r1');
      renderEngine(<ResourceShowPage resource={name} />, {
        url: '/x/r1',
        path: '/x/:id',
        show: { [name]: record },
      });
      const details = await screen.findByTestId('resource-details');
      expect(within(details).getByRole('heading', { level: 1 })).toHaveTextContent('Record r1');
      for (const meta of fieldsOf(resource.meta.types.show).filter((m) => !m.hidden && !m.items))
        expect(hasCell(cellNameOf(meta)), meta.path).toBe(true);
    });

  if (routeBuilt(name, 'show'))
    it('has a renderer for every column of the item tables of its details', () => {
      for (const list of fieldsOf(resource.meta.types.show).filter((m) => !m.hidden && m.items))
        for (const meta of fieldsOf(list.items ?? null).filter((m) => !m.hidden))
          expect(hasCell(cellNameOf(meta)), `${list.path}.${meta.path}: ${cellNameOf(meta)}`).toBe(
            true,
          );
    });

  for (const kind of ['create', 'update'] as const) {
    const type = resource.meta.types[kind];
    if (!type || !routeBuilt(name, kind === 'update' ? 'edit' : 'create')) continue;
    it(`has a widget for every visible field of its ${kind} form`, () => {
      const extension = resolveFormExtension(type, formExtensions[type]);
      const registry = { ...baseWidgets, ...(extension?.widgets ?? {}) };
      for (const meta of fieldsOf(type).filter((m) => !m.hidden))
        expect(registry[widgetNameOf(meta)], `${meta.path}: ${widgetNameOf(meta)}`).toBeDefined();
    });
  }
});

describe('desktop state actions in the card', () => {
  const desktops = resourceList.find((r) => r.name === 'desktops') as ResourceDefinition;
  const desktop = (state: string) => ({
    ...sample(desktops, 'Desktop', 'd1'),
    state,
    type: 'persistent',
    viewers: ['browser-vnc'],
  });
  const more = async () => {
    fireEvent.click(screen.getByTestId('record-more'));
    return screen.findByRole('menu');
  };

  it('offers start, edit and delete on a stopped desktop, and no stop', async () => {
    renderEngine(<RecordActions resource="desktops" record={desktop('stopped')} />);
    const menu = await more();
    for (const action of ['start', 'edit', 'delete'])
      expect(menu.querySelector(`[data-action="${action}"]`), action).not.toBeNull();
    expect(document.querySelector('[data-action="stop"]')).toBeNull();
  });

  it('offers stop on a started desktop, and neither edit nor delete', async () => {
    renderEngine(<RecordActions resource="desktops" record={desktop('started')} />);
    expect(screen.getByRole('button', { name: 'Stop' })).toHaveAttribute('data-action', 'stop');
    const menu = await more();
    expect(menu.querySelector('[data-action="edit"]')).toBeNull();
    expect(menu.querySelector('[data-action="delete"]')).toBeNull();
  });
});
