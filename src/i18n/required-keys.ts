/**
 * Catalogue keys the generated resources require in the `resources` namespace, as path segments
 * (field paths stay one segment: `fields` holds flat dotted keys such as `hardware.memory`).
 * Shared by scripts/i18n-sync.ts and the i18n test.
 */
interface Inputs {
  resources: readonly unknown[];
  fields: Record<string, readonly { path: string; enum?: readonly unknown[] }[]>;
  stateActions: Record<string, { actions: Record<string, unknown> }>;
}

const ROUTE_ACTIONS = ['list', 'create', 'edit', 'show'] as const;

/** Lists every required key of the resources namespace. */
export function requiredResourceKeys({ resources, fields, stateActions }: Inputs): string[][] {
  const keys: string[][] = [];
  for (const item of resources as readonly Record<string, unknown>[]) {
    const name = String(item.name);
    const meta = (item.meta ?? {}) as {
      entity?: string | null;
      extraRoutes?: Readonly<Record<string, string>>;
      list?: { tabs?: readonly { key: string }[]; toggles?: readonly { key: string }[] } | null;
    };
    // Every list screen has an empty state, declared or not.
    if (typeof item.list === 'string') keys.push([name, 'empty']);
    if (meta.list) {
      for (const tab of meta.list.tabs ?? []) keys.push([name, 'tabs', tab.key]);
      for (const toggle of meta.list.toggles ?? []) keys.push([name, 'toggles', toggle.key]);
    }
    keys.push([name, 'title']);
    for (const action of ROUTE_ACTIONS)
      if (typeof item[action] === 'string') keys.push([name, 'actions', action]);
    // Extra routes are titled like the others (the desktop viewer, the duplicate form...).
    for (const kind of Object.keys(meta.extraRoutes ?? {})) keys.push([name, 'actions', kind]);
    const entity = meta.entity;
    if (entity) {
      const seen = new Set<string>();
      for (const [typeName, list] of Object.entries(fields)) {
        if (!typeName.startsWith(entity)) continue;
        for (const field of list) {
          if (seen.has(field.path)) continue;
          seen.add(field.path);
          keys.push([name, 'fields', field.path]);
          for (const value of field.enum ?? []) {
            if (typeof value === 'string' && value)
              keys.push([name, 'enum', field.path.replace(/\./g, '_'), value]);
          }
        }
      }
    }
    for (const action of Object.keys(stateActions[name]?.actions ?? {}))
      keys.push([name, 'stateActions', action]);
  }
  return keys;
}
