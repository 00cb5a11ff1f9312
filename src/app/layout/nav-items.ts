/**
 * Navbar entries in the order of spec section 2 "Navbar". Entries backed by a resource resolve
 * their path and role gate from `src/generated/resources.ts` and disappear while the resource is
 * not generated yet; external links come from the user config.
 */
import { operations, type Operation } from '@/generated/api';
import { resources } from '@/generated/resources';
import type { Role, UserConfig } from '@/generated/types';
import { canAccess } from '@/providers/access-control-provider';

/** Roles that see the administration link (the admin application's own audience). */
export const ADMIN_LINK_ROLES: readonly Role[] = ['admin', 'manager'];
export const ADMIN_LINK = '/isard-admin/login';
const VPN_PATH = '/user/vpn/config';

export type NavEntry =
  | { key: string; kind: 'route'; path: string; children?: NavEntry[] }
  | { key: string; kind: 'external'; href: string }
  | { key: string; kind: 'vpn'; operation: string }
  | { key: string; kind: 'logout' };

function resourceList(name: string, role: Role, config: UserConfig | null): string | null {
  const resource = resources.find((r) => r.name === name) as
    { list?: string; meta: { visibleIf?: string | null } } | undefined;
  if (!resource?.list || !canAccess(role, name, 'list')) return null;
  // `visibleIf` names a boolean of the user config (e.g. show_bookings_button).
  const flag = resource.meta.visibleIf;
  if (flag && !(config as Record<string, unknown> | null)?.[flag]) return null;
  return resource.list;
}

/** Builds the navbar for a role and config. */
export function buildNavEntries(role: Role, config: UserConfig | null): NavEntry[] {
  const route = (key: string, resource: string, r: Role): NavEntry | null => {
    const path = resourceList(resource, r, config);
    return path ? { key, kind: 'route', path } : null;
  };
  const entries: (NavEntry | null)[] = [];
  entries.push(route('desktops', 'desktops', role));
  entries.push(route('deployments', 'deployments', role));
  entries.push(route('templates', 'templates', role));
  const bookings = [
    route('bookingsSummary', 'bookings', role),
    route('planning', 'planning', role),
  ].filter((entry): entry is NavEntry => entry !== null);
  const firstBooking = bookings[0];
  if (firstBooking && firstBooking.kind === 'route') {
    entries.push({ key: 'bookings', kind: 'route', path: firstBooking.path, children: bookings });
  }
  entries.push(route('media', 'media', role));
  if (config?.viewers_documentation_url)
    entries.push({ key: 'viewers', kind: 'external', href: config.viewers_documentation_url });
  entries.push(route('storage', 'storage', role));
  entries.push(route('profile', 'profile', role));
  if (ADMIN_LINK_ROLES.includes(role))
    entries.push({ key: 'admin', kind: 'external', href: ADMIN_LINK });
  if (config?.documentation_url)
    entries.push({ key: 'help', kind: 'external', href: config.documentation_url });
  const vpn = Object.values(operations as Record<string, Operation>).find(
    (op) => op.path === VPN_PATH,
  );
  if (vpn && (vpn.roles === null || vpn.roles.includes(role)))
    entries.push({ key: 'vpn', kind: 'vpn', operation: vpn.key });
  entries.push({ key: 'logout', kind: 'logout' });
  return entries.filter((entry): entry is NavEntry => entry !== null);
}
