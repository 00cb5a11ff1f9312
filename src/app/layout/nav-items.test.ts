import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { operations, type Operation } from '@/generated/api';
import { menu, type MenuEntry } from '@/generated/menu';
import type { Role, UserConfig } from '@/generated/types';
import { hasIcon } from '@/components/icon';
import {
  buildNavEntries,
  GROUP_OWN_ROUTE_LABEL,
  isEntryActive,
  type NavEntry,
  type NavSource,
} from './nav-items';

const ROLES: Role[] = ['admin', 'manager', 'advanced', 'user'];
const ops = operations as Readonly<Record<string, Operation>>;

const config: UserConfig = {
  show_bookings_button: true,
  documentation_url: 'https://docs.example.org/',
  viewers_documentation_url: 'https://docs.example.org/viewers',
  show_temporal_tab: true,
  show_change_email_button: true,
  http_port: '80',
  https_port: '443',
  bastion_domain: null,
  bastion_ssh_port: null,
  can_use_bastion: false,
  can_use_bastion_individual_domains: false,
  migrations_block: false,
  desktop_shutdown_timeout: 20,
  session: { id: 's', max_renew_time: 0, max_time: 0 },
};
const noFlags: UserConfig = {
  ...config,
  show_bookings_button: false,
  documentation_url: '',
  viewers_documentation_url: '',
};

/** Every leaf of a navbar, groups flattened, with the labels they show. */
function leaves(entries: readonly NavEntry[]): NavEntry[] {
  return entries.flatMap((entry) => (entry.kind === 'group' ? leaves(entry.children) : [entry]));
}
const keysOf = (entries: readonly NavEntry[]) => leaves(entries).map((entry) => entry.key);
const menuEntries: readonly MenuEntry[] = menu;
const byKey = new Map(menuEntries.map((entry) => [entry.key, entry]));

function entry(partial: Partial<MenuEntry> & Pick<MenuEntry, 'key' | 'kind'>): MenuEntry {
  return {
    order: 0,
    icon: 'desktop',
    parent: null,
    path: null,
    href: null,
    hrefFrom: null,
    external: false,
    operation: null,
    roles: null,
    visibleIf: null,
    planned: false,
    ...partial,
  };
}
/** A fake operation, shaped like a generated one (the generated row supplies the other fields). */
function op(key: string, partial: Partial<Operation> = {}): Operation {
  const [resource = key, name = 'list'] = key.split('.');
  const template = Object.values(ops)[0] as Operation;
  return {
    ...template,
    key,
    resource,
    name,
    path: `/${resource}`,
    roles: null,
    planned: false,
    ...partial,
  };
}

describe('buildNavEntries over the generated menu', () => {
  it.each(ROLES)('shows %s only entries that lead to a working screen', (role) => {
    for (const shown of leaves(buildNavEntries(role, config))) {
      const source = byKey.get(shown.key);
      expect(source, shown.key).toBeDefined();
      if (!source) continue;
      expect(source.planned, shown.key).toBe(false);
      if (source.roles) expect(source.roles, shown.key).toContain(role);
      if (source.kind === 'resource') expect(source.operation, shown.key).not.toBeNull();
      if (source.operation) {
        const operation = ops[source.operation];
        expect(operation?.planned, shown.key).toBe(false);
        if (operation?.roles) expect(operation.roles, shown.key).toContain(role);
      }
    }
  });

  it.each(ROLES)('keeps every usable entry for %s, in menu order', (role) => {
    const usable = (item: MenuEntry): boolean => {
      const operation = item.operation ? ops[item.operation] : null;
      if (item.planned || (item.roles && !item.roles.includes(role))) return false;
      if (item.kind === 'resource' || item.kind === 'download') {
        if (!operation || operation.planned) return false;
      }
      if (operation?.roles && !operation.roles.includes(role)) return false;
      if (item.kind === 'resource' && !item.path) return false;
      return true;
    };
    // A heading (kind group) is no leaf, and its children go with it when its roles leave it out.
    const heading = (item: MenuEntry): MenuEntry | undefined => {
      const parent = item.parent ? byKey.get(item.parent) : undefined;
      return parent?.kind === 'group' ? parent : undefined;
    };
    const expected = menuEntries
      .filter((item) => item.kind !== 'group' && usable(item))
      .filter((item) => {
        const group = heading(item);
        return !group || usable(group);
      })
      .map((item) => item.key);
    const shown = keysOf(buildNavEntries(role, config));
    // Children follow their parent, so compare as sets and check the top-level order.
    expect([...shown].sort()).toEqual([...expected].sort());
    const topLevel = buildNavEntries(role, config).map((item) => item.key);
    const menuOrder = menuEntries.map((item) => item.key);
    expect(topLevel).toEqual(
      [...topLevel].sort((a, b) => menuOrder.indexOf(a) - menuOrder.indexOf(b)),
    );
    // A heading shows exactly when one of its children does.
    for (const group of menuEntries.filter((item) => item.kind === 'group')) {
      const children = expected.filter((key) => byKey.get(key)?.parent === group.key);
      expect(topLevel.includes(group.key), `${role}: ${group.key}`).toBe(children.length > 0);
    }
  });

  it('marks a resource entry active on every page of its resource, and only there', () => {
    const routes = leaves(buildNavEntries('user', config)).flatMap((entry) =>
      entry.kind === 'route' ? [entry] : [],
    );
    const desktops = routes.find((entry) => entry.key === 'desktops');
    const bin = routes.find((entry) => entry.key === 'recycle-bins');
    if (!desktops || !bin) throw new Error('the user navbar lacks desktops or the recycle bin');
    for (const path of ['/desktops', '/desktops/new', '/domain/edit']) {
      expect(isEntryActive(desktops, path), path).toBe(true);
      expect(isEntryActive(bin, path), path).toBe(false);
    }
    expect(isEntryActive(bin, '/recycleBins')).toBe(true);
    expect(isEntryActive(bin, '/recyclebin/3f1c')).toBe(true);
    expect(isEntryActive(desktops, '/desktopsx')).toBe(false);
    expect(isEntryActive(desktops, '/')).toBe(false);
  });

  it('hides entries gated by a config flag or a config URL when the config lacks them', () => {
    for (const role of ROLES) {
      for (const shown of leaves(buildNavEntries(role, noFlags))) {
        const source = byKey.get(shown.key);
        expect(source?.visibleIf ?? null, shown.key).toBeNull();
        expect(source?.hrefFrom ?? null, shown.key).toBeNull();
      }
    }
  });

  it('shows links whose URL comes from the config, opening in a new tab when external', () => {
    const fromConfig = menuEntries.filter((item) => item.hrefFrom && !item.planned);
    for (const item of fromConfig) {
      const shown = leaves(buildNavEntries('user', config)).find((e) => e.key === item.key);
      if (item.roles && !item.roles.includes('user')) continue;
      expect(shown, item.key).toMatchObject({
        kind: 'link',
        href: item.hrefFrom ? config[item.hrefFrom] : undefined,
        external: item.external,
      });
    }
  });

  it('always ends with the logout entry when the menu has one', () => {
    const logout = menuEntries.find((item) => item.kind === 'logout');
    for (const role of ROLES) {
      const shown = buildNavEntries(role, null);
      if (logout) expect(shown.at(-1)).toMatchObject({ key: logout.key, kind: 'logout' });
    }
  });

  it('has an English label and a registered icon for every menuEntries entry', () => {
    const english = JSON.parse(
      readFileSync(join(__dirname, '..', '..', '..', 'locales', 'en', 'common.json'), 'utf8'),
    ) as { nav: Record<string, unknown> };
    for (const item of menu) {
      expect(typeof english.nav[item.key], `common:nav.${item.key}`).toBe('string');
      expect(item.icon && hasIcon(item.icon), `icon of ${item.key}`).toBe(true);
    }
    expect(typeof english.nav[GROUP_OWN_ROUTE_LABEL.split('.')[1] ?? '']).toBe('string');
  });
});

describe('buildNavEntries rules', () => {
  const source = (items: MenuEntry[], extra: Operation[] = []): NavSource => ({
    menu: items,
    operations: Object.fromEntries(extra.map((o) => [o.key, o])),
  });

  it('hides a resource without a list operation and one whose operation is planned', () => {
    const nav = buildNavEntries(
      'user',
      config,
      source(
        [
          entry({ key: 'a', kind: 'resource', path: '/a', operation: null }),
          entry({ key: 'b', kind: 'resource', path: '/b', operation: 'b.list' as never }),
          entry({ key: 'c', kind: 'resource', path: '/c', operation: 'c.list' as never }),
        ],
        [op('b.list', { planned: true }), op('c.list')],
      ),
    );
    expect(nav).toEqual([
      {
        key: 'c',
        labelKey: 'common:nav.c',
        icon: 'desktop',
        kind: 'route',
        path: '/c',
        match: ['/c'],
      },
    ]);
  });

  it('applies the entry roles and the operation roles', () => {
    const items = [
      entry({
        key: 'a',
        kind: 'resource',
        path: '/a',
        operation: 'a.list' as never,
        roles: ['admin'],
      }),
      entry({ key: 'b', kind: 'download', operation: 'b.get' as never }),
    ];
    const operationTable = [op('a.list'), op('b.get', { roles: ['admin', 'manager'] })];
    expect(keysOf(buildNavEntries('admin', config, source(items, operationTable)))).toEqual([
      'a',
      'b',
    ]);
    expect(keysOf(buildNavEntries('manager', config, source(items, operationTable)))).toEqual([
      'b',
    ]);
    expect(keysOf(buildNavEntries('user', config, source(items, operationTable)))).toEqual([]);
  });

  it('hides planned entries, downloads of planned operations and links without a usable URL', () => {
    const nav = buildNavEntries(
      'user',
      { ...config, documentation_url: 'javascript:alert(1)', viewers_documentation_url: '' },
      source(
        [
          entry({ key: 'planned', kind: 'link', href: '/x', planned: true }),
          entry({ key: 'vpn', kind: 'download', operation: 'p.vpn' as never }),
          entry({ key: 'bad', kind: 'link', hrefFrom: 'documentation_url', external: true }),
          entry({ key: 'empty', kind: 'link', hrefFrom: 'viewers_documentation_url' }),
          entry({ key: 'ok', kind: 'link', href: '/elsewhere' }),
        ],
        [op('p.vpn', { planned: true })],
      ),
    );
    expect(keysOf(nav)).toEqual(['ok']);
  });

  it('nests children under their parent, the parent route first', () => {
    const items = [
      entry({ key: 'p', kind: 'resource', path: '/p', operation: 'p.list' as never }),
      entry({ key: 'x', kind: 'logout' }),
      entry({ key: 'c', kind: 'resource', path: '/c', operation: 'c.list' as never, parent: 'p' }),
    ];
    const nav = buildNavEntries('user', config, source(items, [op('p.list'), op('c.list')]));
    expect(nav.map((e) => [e.key, e.kind])).toEqual([
      ['p', 'group'],
      ['x', 'logout'],
    ]);
    const group = nav[0];
    expect(group?.kind === 'group' && group.children).toEqual([
      {
        key: 'p',
        labelKey: GROUP_OWN_ROUTE_LABEL,
        icon: 'desktop',
        kind: 'route',
        path: '/p',
        match: ['/p'],
      },
      {
        key: 'c',
        labelKey: 'common:nav.c',
        icon: 'desktop',
        kind: 'route',
        path: '/c',
        match: ['/c'],
      },
    ]);
  });

  it('shows a parent without surviving children as a plain entry', () => {
    const items = [
      entry({ key: 'p', kind: 'resource', path: '/p', operation: 'p.list' as never }),
      entry({
        key: 'c',
        kind: 'resource',
        path: '/c',
        operation: 'c.list' as never,
        parent: 'p',
        roles: ['admin'],
      }),
    ];
    const nav = buildNavEntries('user', config, source(items, [op('p.list'), op('c.list')]));
    expect(nav).toEqual([
      {
        key: 'p',
        labelKey: 'common:nav.p',
        icon: 'desktop',
        kind: 'route',
        path: '/p',
        match: ['/p'],
      },
    ]);
  });

  it('puts the children of a hidden parent in its place', () => {
    const items = [
      entry({ key: 'a', kind: 'logout' }),
      entry({
        key: 'p',
        kind: 'resource',
        path: '/p',
        operation: 'p.list' as never,
        visibleIf: 'show_bookings_button',
      }),
      entry({ key: 'c', kind: 'resource', path: '/c', operation: 'c.list' as never, parent: 'p' }),
    ];
    const nav = buildNavEntries('user', noFlags, source(items, [op('p.list'), op('c.list')]));
    expect(nav.map((e) => [e.key, e.kind])).toEqual([
      ['a', 'logout'],
      ['c', 'route'],
    ]);
  });

  it('shows a heading with its usable children while its roles allow it, and hides it otherwise', () => {
    const items = [
      entry({ key: 'g', kind: 'group', icon: 'settings', roles: ['admin', 'manager'] }),
      entry({ key: 'a', kind: 'resource', path: '/a', operation: 'a.list' as never, parent: 'g' }),
      entry({ key: 'b', kind: 'resource', path: '/b', operation: 'b.list' as never, parent: 'g' }),
      entry({ key: 'x', kind: 'logout' }),
    ];
    const built = source(items, [op('a.list', { roles: ['admin', 'manager'] }), op('b.list')]);
    for (const role of ['admin', 'manager'] as const) {
      const nav = buildNavEntries(role, config, built);
      expect(
        nav.map((e) => [e.key, e.kind]),
        role,
      ).toEqual([
        ['g', 'group'],
        ['x', 'logout'],
      ]);
      const group = nav[0];
      expect(group).toMatchObject({ labelKey: 'common:nav.g', icon: 'settings' });
      expect(group?.kind === 'group' && group.children.map((c) => c.key)).toEqual(['a', 'b']);
    }
    // The roles of the heading hide its children too.
    expect(keysOf(buildNavEntries('user', config, built))).toEqual(['x']);
    // Without a child whose operation is built there is no heading.
    const planned = source(items, [
      op('a.list', { planned: true }),
      op('b.list', { planned: true }),
    ]);
    expect(buildNavEntries('admin', config, planned).map((e) => e.key)).toEqual(['x']);
  });

  it('puts entries naming an unknown parent at the top level and survives a looping menu', () => {
    const items = [
      entry({ key: 'o', kind: 'link', href: '/o', parent: 'missing' }),
      entry({ key: 'r', kind: 'link', href: '/r' }),
      entry({ key: 'l', kind: 'link', href: '/l', parent: 'r' }),
      entry({ key: 'r', kind: 'link', href: '/r2', parent: 'l' }),
    ];
    const nav = buildNavEntries('user', config, source(items));
    expect(nav.map((e) => e.key)).toEqual(['o', 'r']);
  });
});
