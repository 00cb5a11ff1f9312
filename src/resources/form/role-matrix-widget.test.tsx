import { describe, expect, it, vi } from 'vitest';
import { fireEvent, screen, waitFor } from '@testing-library/react';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { useState } from 'react';
import type { FieldMeta } from '@/generated/fields';
import type { RoleVisibility, RoleVisibilityConfig } from '@/generated/types';
import { renderWithProviders } from './test-utils';
import { RoleMatrixWidget } from './role-matrix-widget';
import { resolveWidget } from './widget-registry';
import { fieldsOf } from './field-meta';

const answer: RoleVisibility = {
  id: 'role-visibility',
  file: 'config/portal.json',
  config: {},
  catalogue: [
    {
      name: 'desktops',
      sets: { read: ['admin', 'manager', 'advanced', 'user'] },
      fields: ['name', 'description'],
      actions: ['start'],
    },
    {
      name: 'deployments',
      sets: { view: ['admin', 'manager', 'advanced'] },
      fields: [],
      actions: [],
    },
  ],
};

vi.mock('@/providers/http-client', () => ({
  requestOperation: vi.fn(async () => answer),
}));

const meta = (): FieldMeta => {
  const found = fieldsOf('RoleVisibilityUpdate').find((m) => m.path === 'config');
  if (!found) throw new Error('no config field');
  return found;
};

function Harness({ onValue }: { onValue: (value: RoleVisibilityConfig) => void }) {
  const [value, setValue] = useState<RoleVisibilityConfig>({});
  const [client] = useState(() => new QueryClient());
  return (
    <QueryClientProvider client={client}>
      <RoleMatrixWidget
        id="rv-config"
        path="config"
        label="Who sees what"
        value={value}
        onChange={(next) => {
          setValue(next as RoleVisibilityConfig);
          onValue(next as RoleVisibilityConfig);
        }}
        onBlur={() => undefined}
        required
        disabled={false}
        meta={meta()}
      />
    </QueryClientProvider>
  );
}

describe('roleMatrix widget', () => {
  it('is the registered widget of the role-visibility config field', () => {
    expect(resolveWidget(meta())).toBe(RoleMatrixWidget);
  });

  it('hides a field from a role with one checkbox, and filters resources by the search', async () => {
    const seen: RoleVisibilityConfig[] = [];
    renderWithProviders(<Harness onValue={(v) => seen.push(v)} />);
    await waitFor(() => expect(screen.getByText('Desktops')).toBeTruthy());
    expect(screen.getByText('Deployments')).toBeTruthy();
    fireEvent.click(screen.getByText('Desktops'));
    const box = await screen.findByRole('checkbox', { name: 'Description: User' });
    expect((box as HTMLInputElement).checked).toBe(true);
    fireEvent.click(box);
    expect(seen.at(-1)).toEqual({
      fields: { desktops: { description: ['admin', 'manager', 'advanced'] } },
    });
    expect(
      (screen.getByRole('checkbox', { name: 'Description: User' }) as HTMLInputElement).checked,
    ).toBe(false);
    expect(screen.getByText('1 change')).toBeTruthy();

    fireEvent.change(screen.getByTestId('role-matrix-search'), { target: { value: 'deploy' } });
    expect(screen.queryByText('Desktops')).toBeNull();
    expect(screen.getByText('Deployments')).toBeTruthy();
  });
});
