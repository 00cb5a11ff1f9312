/**
 * How a form route shows its preview (the answer of its `preview` read operation above the form):
 * through the renderer the answer's definition names (`x-ui.widget`, registered here by name), else
 * as the lists of item names of the answer's array fields (what a migration moves). An unknown name
 * throws, naming the form.
 */
import { List, Stack, Text, Title } from '@mantine/core';
import type { ComponentType } from 'react';
import { useTranslation } from 'react-i18next';
import { fields, type FieldMeta } from '@/generated/fields';
import { PreviewItemLine } from '../actions/action-preview';
import { fieldLabelKey } from './field-meta';

export interface PreviewProps {
  /** The form's resource (labels come from `resources:<resource>.`). */
  resource: string;
  /** The generated type of the answer (null when the operation declares none). */
  type: string | null;
  /** The read operation's answer. */
  value: unknown;
}

export type PreviewComponent = ComponentType<PreviewProps>;

const registry = new Map<string, PreviewComponent>();

/** Adds (or replaces) a named preview renderer. */
export function registerPreview(name: string, component: PreviewComponent): void {
  registry.set(name, component);
}

/** True when a preview renderer has this name. */
export function hasPreview(name: string): boolean {
  return registry.has(name);
}

/**
 * The renderer of a form's preview: the named one, else the item lists.
 * @throws Error naming the form when the name is not registered
 */
export function resolvePreview(name: string | undefined, form: string): PreviewComponent {
  if (!name) return ItemListsPreview;
  const component = registry.get(name);
  if (!component) throw new Error(`No preview renderer "${name}" registered for form ${form}`);
  return component;
}

interface NamedItem {
  key: string;
  name: string;
  kind: string | null;
}

/** The named items of one list of the answer. */
function namedItems(list: unknown): NamedItem[] {
  if (!Array.isArray(list)) return [];
  return list.flatMap((raw: unknown, index) => {
    if (typeof raw === 'string') return [{ key: `${raw}-${index}`, name: raw, kind: null }];
    const item = (raw ?? {}) as Readonly<Record<string, unknown>>;
    if (typeof item.name !== 'string' || !item.name) return [];
    return [
      {
        key: `${String(item.id ?? item.name)}-${index}`,
        name: item.name,
        kind: typeof item.kind === 'string' ? item.kind : null,
      },
    ];
  });
}

/** The answer's lists of items (array fields of objects), each under its field label with a count. */
export function ItemListsPreview({ resource, type, value }: PreviewProps) {
  const { t } = useTranslation();
  const answer = (value ?? {}) as Readonly<Record<string, unknown>>;
  const lists = (
    (type ? (fields as Readonly<Record<string, readonly FieldMeta[]>>)[type] : null) ?? []
  )
    .filter((meta) => meta.type === 'array' && !!meta.items && !meta.hidden)
    .map((meta) => ({ meta, items: namedItems(answer[meta.path]) }));
  const total = lists.reduce((sum, list) => sum + list.items.length, 0);
  if (total === 0)
    return (
      <Text size="sm" c="dimmed" data-testid="form-preview" data-count={0}>
        {t('common:preview.none')}
      </Text>
    );
  return (
    <Stack gap="sm" data-testid="form-preview" data-count={total}>
      {lists
        .filter((list) => list.items.length > 0)
        .map(({ meta, items }) => (
          <section key={meta.path} aria-labelledby={`preview-${meta.path}`}>
            <Title order={2} size="h5" id={`preview-${meta.path}`}>
              {t('common:preview.listTitle', {
                label: t(fieldLabelKey(resource, meta.path)),
                count: items.length,
              })}
            </Title>
            <List size="sm" mt={4} spacing={2}>
              {items.map((item) => (
                <PreviewItemLine key={item.key} item={item} />
              ))}
            </List>
          </section>
        ))}
    </Stack>
  );
}
