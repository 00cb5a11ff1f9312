/**
 * Run by server/test/added-field.test.ts inside a copy of the repository whose stored resources
 * each gained the field of ./resources.ts (vitest, jsdom): for every resource of RESOURCE_PROBES
 * the field must show up, with no code change, as a column of its table view and an input of its
 * create or edit form that refuses a value breaking the field's pattern (and, in an edit form,
 * sends what was typed). Test names are `<resource> <check>` (listColumn, card, form).
 */
import { cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { BaseRecord } from '@refinedev/core';
import '@/app/registrations';
import { CreatePage, EditPage } from '@/app/form-pages';
import { resourceOf } from '@/generated/resources';
import { ResourceListPage } from '@/resources/list/resource-list-page';
import { renderEngine, stubLayout } from '@/resources/testing/engine-test-wrapper';
import {
  CREATED,
  FIELD as field,
  INVALID,
  LABEL as label,
  RESOURCE_PROBES,
  UPDATED,
} from './resources';

const valid = CREATED;
const invalid = INVALID;

const desktop: BaseRecord = {
  id: 'd1',
  name: 'Probe desktop',
  description: 'has the new field',
  state: 'stopped',
  type: 'persistent',
  viewers: ['browser-vnc'],
  image: { id: '3', type: 'stock', url: '' },
  accessed: 1_700_000_000,
  [field]: valid,
};

const info: BaseRecord = {
  id: 'd1',
  kind: 'desktop',
  name: 'Probe desktop',
  description: 'has the new field',
  state: 'stopped',
  server: false,
  image: { id: '3', type: 'stock', url: '' },
  guest_properties: { viewers: { browser_vnc: { options: null } } },
  hardware: {
    vcpus: 1,
    memory: 1,
    disk_size: 1,
    boot_order: ['disk'],
    reservables: { vgpus: null },
  },
  limited_hardware: null,
  [field]: valid,
};

beforeAll(() => {
  stubLayout();
  // The desktop form's reference data (allowed hardware, media, cards) comes from the API.
  const answers: Record<string, unknown> = {
    '/api/v3/user/hardware/allowed': {
      interfaces: [],
      graphics: [],
      videos: [],
      boot_order: [{ id: 'disk', name: 'Hard disk', allowed: true }],
      disk_bus: [],
      reservables: { vgpus: [{ id: 'None', name: 'No GPU', allowed: true }] },
      quota: false,
      restriction_applied: 'user_quota',
    },
    '/api/v3/media_allowed': [],
    '/api/v3/images/desktops': [{ id: '3', type: 'stock', url: '' }],
  };
  vi.stubGlobal('fetch', async (url: string) => {
    const path = new URL(url, 'http://localhost').pathname;
    return new Response(JSON.stringify(answers[path] ?? {}), {
      status: 200,
      headers: { 'Content-Type': 'application/json' },
    });
  });
});

afterEach(() => {
  cleanup();
  localStorage.clear();
});

/** The record a list or an edit form of the resource is given. */
const recordOf = (resource: string): BaseRecord =>
  resource === 'desktops' ? desktop : { id: 'r1', name: 'Probe record', [field]: valid };

describe(`the added field ${field}`, () => {
  for (const probe of RESOURCE_PROBES) {
    if (!probe.noListColumn)
      it(`${probe.resource} listColumn`, async () => {
        localStorage.setItem(`view:${probe.resource}`, 'table');
        renderEngine(<ResourceListPage resource={probe.resource} />, {
          records: { [probe.resource]: [recordOf(probe.resource)] },
          role: 'admin',
        });
        const table = await screen.findByRole('table');
        expect(within(table).getByRole('columnheader', { name: label })).toBeInTheDocument();
        const cell = table.querySelector(`td[data-field="${field}"]`);
        expect(cell).toHaveTextContent(valid);
      });
    if (probe.card)
      it(`${probe.resource} card`, async () => {
        localStorage.setItem(`view:${probe.resource}`, 'cards');
        renderEngine(<ResourceListPage resource={probe.resource} />, {
          records: { [probe.resource]: [recordOf(probe.resource)] },
        });
        const card = await screen.findByTestId('record');
        const line = card.querySelector(`[data-field="${field}"]`);
        expect(line).toHaveTextContent(label);
        expect(line).toHaveTextContent(valid);
      });
    const form = probe.form;
    if (form === 'create' || form === 'edit')
      it(`${probe.resource} form`, async () => {
        const route = resourceOf(probe.resource)?.[form] ?? '/';
        const { calls, container } = renderEngine(
          form === 'edit' ? (
            <EditPage resource={probe.resource} kind="edit" />
          ) : (
            <CreatePage resource={probe.resource} kind="create" />
          ),
          {
            url: `${route.replace(':id', 'r1')}?id=r1`,
            path: route,
            role: 'admin',
            show: {
              [probe.resource]: probe.resource === 'desktops' ? info : recordOf(probe.resource),
            },
          },
        );
        const input = await screen.findByRole('textbox', { name: label });
        if (form === 'edit') expect(input).toHaveValue(valid);
        const submit = () => {
          const button = container.querySelector('button[type="submit"]');
          if (!button) throw new Error('the form has no submit button');
          fireEvent.click(button);
        };
        fireEvent.change(input, { target: { value: invalid } });
        submit();
        await waitFor(() => expect(input).toHaveAttribute('aria-invalid', 'true'));
        expect(calls.update).toEqual([]);
        expect(calls.create).toEqual([]);
        if (form === 'edit') {
          fireEvent.change(input, { target: { value: UPDATED } });
          submit();
          await waitFor(() => expect(calls.update).toHaveLength(1));
          expect(calls.update[0]?.variables).toMatchObject({ [field]: UPDATED });
        }
      });
  }
});
