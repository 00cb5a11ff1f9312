/**
 * A sharing list keeps the name of a user picked from one search while the next search shows
 * other people: the chosen pill never falls back to the raw id.
 */
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { useState } from 'react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { fields, type FieldMeta } from '@/generated/fields';
import { clearToken, setToken } from '@/lib/token';
import { Providers } from '@/resources/form/test-utils';
import { AllowedListWidget } from './allowed-list-widget';

const fetchMock = vi.fn<typeof fetch>();

function json(body: unknown): Response {
  return new Response(JSON.stringify(body), {
    status: 200,
    headers: { 'Content-Type': 'application/json' },
  });
}

function jwt(): string {
  const enc = (value: unknown) => btoa(JSON.stringify(value)).replace(/=+$/, '');
  return `${enc({ alg: 'HS256' })}.${enc({ exp: Math.floor(Date.now() / 1000) + 3600 })}.sig`;
}

beforeEach(() => {
  setToken(jwt());
  vi.stubGlobal('fetch', fetchMock);
  fetchMock.mockImplementation(async (_input, init) => {
    const { term } = JSON.parse(String(init?.body)) as { term: string };
    return json(
      term === 'an'
        ? [{ id: 'u-ann', name: 'Ann', uid: 'ann' }]
        : [{ id: 'u-bob', name: 'Bob', uid: 'bob' }],
    );
  });
});
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  fetchMock.mockReset();
  clearToken();
});

const meta = {
  ...((fields.DeploymentUsersUpdate as readonly FieldMeta[]).find(
    (m) => m.path === 'allowed',
  ) as FieldMeta),
  widget: 'allowedUsers',
};

function Harness() {
  const [value, setValue] = useState<unknown>([]);
  return (
    <AllowedListWidget
      id="users"
      path="allowed.users"
      label="Users"
      value={value}
      onChange={setValue}
      onBlur={() => undefined}
      required={false}
      disabled={false}
      meta={meta}
    />
  );
}

describe('AllowedListWidget', () => {
  it('names a picked user after a later search', async () => {
    render(
      <Providers>
        <Harness />
      </Providers>,
    );
    const search = screen.getByTestId('allowed-users-search');
    search.focus();
    fireEvent.change(search, { target: { value: 'an' } });
    fireEvent.click(await screen.findByText('Ann (ann)', {}, { timeout: 3000 }));
    search.focus();
    fireEvent.change(search, { target: { value: 'bo' } });
    await screen.findByText('Bob (bob)', {}, { timeout: 3000 });
    await waitFor(() => expect(screen.queryAllByText('u-ann')).toHaveLength(0));
    expect(screen.getAllByText('Ann (ann)').length).toBeGreaterThan(0);
  });
});
