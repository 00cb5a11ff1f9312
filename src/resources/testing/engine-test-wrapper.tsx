/**
 * Renders engine screens in tests the way the app does: refine (headless) with a data provider
 * over given records, the router at a given URL, react-query, Mantine and the English catalogues,
 * and a logged-in role. The data provider records what the screen sent.
 */
import { MantineProvider } from '@mantine/core';
import { Refine, type BaseRecord, type DataProvider } from '@refinedev/core';
import routerProvider from '@refinedev/react-router';
import { QueryClient } from '@tanstack/react-query';
import { render, type RenderResult } from '@testing-library/react';
import type { ReactElement } from 'react';
import { I18nextProvider } from 'react-i18next';
import { MemoryRouter, Route, Routes } from 'react-router';
import { resourceList } from '@/generated/resources';
import type { Role, SessionUser } from '@/generated/types';
import { updateSessionState } from '@/lib/session-state';
import { testI18n } from '../form/test-utils';

export interface EngineCalls {
  create: { resource: string; variables: unknown }[];
  update: { resource: string; id: string | number; variables: unknown }[];
}

export interface RenderEngineOptions {
  /** Records answered by every list call (a promise: the list answers when it settles). */
  records?: Readonly<Record<string, readonly BaseRecord[] | Promise<readonly BaseRecord[]>>>;
  /** Answers of show calls by resource. */
  show?: Readonly<Record<string, BaseRecord>>;
  /** Starting URL (and the route path the element is mounted on). */
  url?: string;
  path?: string;
  role?: Role;
}

export function renderEngine(
  element: ReactElement,
  { records = {}, show = {}, url = '/', path = '*', role = 'user' }: RenderEngineOptions = {},
): RenderResult & { calls: EngineCalls; queryClient: QueryClient } {
  updateSessionState({
    user: { role_id: role, name: 'Test user', username: role } as SessionUser,
    config: null,
  });
  const calls: EngineCalls = { create: [], update: [] };
  const dataProvider: DataProvider = {
    getApiUrl: () => '/api/v3',
    getList: async ({ resource }) => {
      const data = [...((await records[resource]) ?? [])];
      return { data: data as never[], total: data.length };
    },
    getOne: async ({ resource }) => ({ data: (show[resource] ?? {}) as never }),
    create: async ({ resource, variables }) => {
      calls.create.push({ resource, variables });
      return { data: { id: 'new' } as never };
    },
    update: async ({ resource, id, variables }) => {
      calls.update.push({ resource, id, variables });
      return { data: { id } as never };
    },
    deleteOne: async ({ id }) => ({ data: { id } as never }),
  };
  const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  const result = render(
    <I18nextProvider i18n={testI18n}>
      <MantineProvider>
        <MemoryRouter initialEntries={[url]}>
          <Refine
            routerProvider={routerProvider}
            dataProvider={dataProvider}
            resources={resourceList.map(({ name }) => ({ name }))}
            options={{ disableTelemetry: true, reactQuery: { clientConfig: queryClient } }}
          >
            <Routes>
              <Route path={path} element={element} />
            </Routes>
          </Refine>
        </MemoryRouter>
      </MantineProvider>
    </I18nextProvider>,
  );
  return Object.assign(result, { calls, queryClient });
}

/**
 * jsdom lays nothing out: every element measures 0 and virtualised lists show no rows. Gives
 * every element a size (the virtualiser reads client* for the viewport, offset* per row); returns
 * the function that takes it back.
 */
export function stubLayout({ width = 1200, height = 800 } = {}): () => void {
  const props = ['clientWidth', 'clientHeight', 'offsetWidth', 'offsetHeight'] as const;
  const saved = props.map(
    (name) => [name, Object.getOwnPropertyDescriptor(HTMLElement.prototype, name)] as const,
  );
  for (const name of props)
    Object.defineProperty(HTMLElement.prototype, name, {
      configurable: true,
      get: () => (name.endsWith('Width') ? width : height),
    });
  return () => {
    for (const [name, descriptor] of saved)
      if (descriptor) Object.defineProperty(HTMLElement.prototype, name, descriptor);
      else Reflect.deleteProperty(HTMLElement.prototype, name);
  };
}
