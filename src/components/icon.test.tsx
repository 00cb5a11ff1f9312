import { cleanup, render } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { stateActions } from '@/generated/actions';
import { menu } from '@/generated/menu';
import { resources } from '@/generated/resources';
import { Icon, hasIcon, iconNames } from './icon';

/** Every string held by an `icon` property anywhere in a generated table. */
function schemaIcons(table: unknown, where: string, found = new Map<string, string>()) {
  if (Array.isArray(table)) {
    table.forEach((item, index) => schemaIcons(item, `${where}[${index}]`, found));
  } else if (table && typeof table === 'object') {
    for (const [key, value] of Object.entries(table)) {
      if (key === 'icon' && typeof value === 'string') {
        if (!found.has(value)) found.set(value, `${where}.icon`);
      } else {
        schemaIcons(value, `${where}.${key}`, found);
      }
    }
  }
  return found;
}

const used = new Map([
  ...schemaIcons(menu, 'menu'),
  ...schemaIcons(stateActions, 'stateActions'),
  ...schemaIcons(resources, 'resources'),
]);

afterEach(cleanup);

describe('Icon', () => {
  it('finds icons in the generated menu, resources and state actions', () => {
    expect(used.size).toBeGreaterThan(0);
    for (const entry of menu) if (entry.icon) expect(used.has(entry.icon)).toBe(true);
  });

  it('has an icon for every icon name the schemas use', () => {
    const missing = [...used].filter(([name]) => !hasIcon(name)).map(([n, at]) => `${n} (${at})`);
    expect(missing).toEqual([]);
  });

  it.each(iconNames)('renders "%s" as a decorative svg', (name) => {
    const { container } = render(<Icon name={name} size={16} />);
    const svg = container.querySelector('svg');
    expect(svg).not.toBeNull();
    expect(svg).toHaveAttribute('aria-hidden', 'true');
    expect(svg).toHaveAttribute('width', '16');
    expect(svg).toHaveAttribute('data-icon', name);
  });

  it('gives each entry of the navbar its own icon (one concept, one icon)', () => {
    const byIcon = new Map<string, string[]>();
    for (const entry of menu)
      if (entry.icon) byIcon.set(entry.icon, [...(byIcon.get(entry.icon) ?? []), entry.key]);
    const shared = [...byIcon].filter(([, keys]) => keys.length > 1);
    expect(shared).toEqual([]);
  });

  it('throws a clear error for an unknown name', () => {
    const spy = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    expect(() => render(<Icon name="no-such-icon" />)).toThrow(/Unknown icon "no-such-icon"/);
    spy.mockRestore();
  });
});
