/**
 * Run by server/test/added-field.test.ts inside a copy of the repository whose desktop schema
 * gained the field named in PROBE_FIELD (vitest, jsdom): the field must show up, with no code
 * change, as a column of the desktops table, a line of the desktop card and an input of the edit
 * form that checks its constraint and sends what was typed.
 */
import { cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { BaseRecord } from '@refinedev/core';
import '@/app/registrations';
import { EditPage } from '@/app/form-pages';
import { ResourceListPage } from '@/resources/list/resource-list-page';
import { renderEngine, stubLayout } from '@/resources/testing/engine-test-wrapper';

const field = process.env.PROBE_FIELD ?? '';
const label = process.env.PROBE_LABEL ?? '';
const valid = process.env.PROBE_VALID ?? '';
const invalid = process.env.PROBE_INVALID ?? '';

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

describe(`the added field ${field}`, () => {
  it('is a column of the desktops table', async () => {
    localStorage.setItem('view:desktops', 'table');
    renderEngine(<ResourceListPage resource="desktops" />, { records: { desktops: [desktop] } });
    const table = await screen.findByRole('table');
    expect(within(table).getByRole('columnheader', { name: label })).toBeInTheDocument();
    const cell = table.querySelector(`td[data-field="${field}"]`);
    expect(cell).toHaveTextContent(valid);
  });

  it('is a line of the desktop card', async () => {
    localStorage.setItem('view:desktops', 'cards');
    renderEngine(<ResourceListPage resource="desktops" />, { records: { desktops: [desktop] } });
    const card = await screen.findByTestId('record');
    const line = card.querySelector(`[data-field="${field}"]`);
    expect(line).toHaveTextContent(label);
    expect(line).toHaveTextContent(valid);
  });

  it('is an input of the edit form that checks its constraint and sends the value', async () => {
    const { calls } = renderEngine(<EditPage resource="desktops" kind="edit" />, {
      url: '/domain/edit?id=d1',
      show: { desktops: info },
    });
    const input = await screen.findByRole('textbox', { name: label });
    expect(input).toHaveValue(valid);
    fireEvent.change(input, { target: { value: invalid } });
    fireEvent.click(screen.getByRole('button', { name: 'Save changes' }));
    await waitFor(() => expect(input).toHaveAttribute('aria-invalid', 'true'));
    expect(calls.update).toEqual([]);
    fireEvent.change(input, { target: { value: `${valid}9` } });
    fireEvent.click(screen.getByRole('button', { name: 'Save changes' }));
    await waitFor(() => expect(calls.update).toHaveLength(1));
    expect(calls.update[0]?.variables).toEqual({ [field]: `${valid}9` });
  });
});
