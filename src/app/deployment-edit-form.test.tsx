/**
 * The generated edit page of a resource whose show answer lacks fields of its update body (a
 * deployment's detail has no hardware nor viewers): they start from its `editPrefill` read, and
 * saving one changed value sends that section with the others as they were.
 */
import { cleanup, fireEvent, screen, waitFor } from '@testing-library/react';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import './registrations';
import './form-pages';
import { clearToken, setToken } from '@/lib/token';
import { renderEngine, stubLayout } from '@/resources/testing/engine-test-wrapper';
import { ResourceFormPage } from '@/resources/form/resource-form-page';

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

/** `GET /deployment/{id}`: the list fields and the desktops, without hardware or viewers. */
const detail = {
  id: 'dep-1',
  name: 'Class deployment',
  desktop_name: 'Class desktop',
  description: 'For class A',
  visible: false,
  desktops: [],
  user_permissions: ['recreate'],
};

/** `GET /deployment/info/{id}`: the desktops' settings (its `name` is the desktops' name). */
const info = {
  id: 'dep-1',
  name: 'Class desktop',
  description: 'For class A',
  tag_name: 'Class deployment',
  hardware: {
    vcpus: 3,
    memory: 2.5,
    disk_size: 12,
    boot_order: ['disk'],
    interfaces: [{ id: 'default', mac: '52:54:00:00:00:01' }],
  },
  guest_properties: {
    fullscreen: true,
    credentials: { username: 'student', password: 'secret-pass' },
    viewers: { browser_vnc: { options: null }, file_spice: { options: null } },
  },
  reservables: { vgpus: null },
};

let restoreLayout: () => void;
beforeAll(() => {
  restoreLayout = stubLayout();
});
afterAll(() => restoreLayout());
beforeEach(() => {
  setToken(jwt());
  vi.stubGlobal('fetch', fetchMock);
  fetchMock.mockImplementation(async (input) => {
    const url = String(input);
    if (url.endsWith('/deployment/info/dep-1')) return json(info);
    if (url.endsWith('/user/hardware/allowed'))
      return json({
        interfaces: [{ id: 'default', name: 'Default' }],
        boot_order: [{ id: 'disk', name: 'Hard disk' }],
        quota: false,
      });
    if (url.endsWith('/media_allowed') || url.endsWith('/images/desktops')) return json([]);
    return new Response('{}', { status: 404 });
  });
});
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  fetchMock.mockReset();
  clearToken();
});

describe('the deployment edit page', () => {
  it('starts from the deployment info and saves one changed value with the others unchanged', async () => {
    const { calls } = renderEngine(<ResourceFormPage resource="deployments" mode="edit" />, {
      url: '/deployment/dep-1/edit',
      path: '/deployment/:id/edit',
      show: { deployments: detail },
      role: 'admin',
    });
    const vcpus = await screen.findByRole('textbox', { name: /vCPUs/ });
    expect(vcpus).toHaveValue('3');
    expect(screen.getByRole('textbox', { name: /Memory/ })).toHaveValue('2.5');
    expect(screen.getByDisplayValue('Class deployment')).toBeInTheDocument();
    expect(screen.getByRole('textbox', { name: /Name of the desktops/ })).toHaveValue(
      'Class desktop',
    );
    expect(screen.getByDisplayValue('student')).toBeInTheDocument();

    fireEvent.change(vcpus, { target: { value: '4' } });
    fireEvent.click(screen.getByRole('button', { name: 'Save changes' }));
    await waitFor(() => expect(calls.update).toHaveLength(1));
    const sent = calls.update[0]?.variables as Record<string, unknown>;
    expect(Object.keys(sent)).toEqual(['hardware']);
    expect(sent.hardware).toMatchObject({
      vcpus: 4,
      memory: 2.5,
      disk_size: 12,
      boot_order: ['disk'],
      interfaces: ['default'],
    });
  });
});
