import { useMemo } from 'react';
import type { FieldValues } from 'react-hook-form';
import type { DesktopHardware, HardwareAllowed, Media, Template } from '@/generated/types';
import { SchemaForm } from '@/resources/form/schema-form';
import type { FieldOption, WidgetRegistry } from '@/resources/form/types';
import type { SchemaFormHandle } from '@/resources/form/use-schema-form';
import { hardwareOptions } from './hardware-limits';
import { ImagePickerWidget } from './image-picker-widget';
import { MediaWidget } from './media-widget';
import type { CardImage } from './queries';
import { ReservablesWidget } from './reservables-widget';
import { TemplatePickerWidget } from './template-picker-widget';
import { ViewerPickerWidget } from './viewer-picker-widget';

/** The desktop form's own widgets, by `x-ui.widget` name. */
export const desktopWidgets: WidgetRegistry = {
  templatePicker: TemplatePickerWidget,
  viewerPicker: ViewerPickerWidget,
  reservables: ReservablesWidget,
  media: MediaWidget,
  imagePicker: ImagePickerWidget,
};

/** Spec "New desktop": template selection, hardware, viewers, credentials, bookable profile, media, image. */
export const DESKTOP_SECTION_ORDER = [
  'general',
  'hardware',
  'viewers',
  'credentials',
  'reservables',
  'media',
  'image',
] as const;

/** The image field gets its own section (the schema gives it none). */
export const DESKTOP_LAYOUT = { image: { section: 'image' } } as const;

export interface DesktopFormBodyProps<T extends FieldValues> {
  handle: SchemaFormHandle<T>;
  type: 'DesktopCreate' | 'DesktopUpdate';
  hardwareAllowed: HardwareAllowed | undefined;
  currentHardware: DesktopHardware | undefined;
  media: readonly Media[] | undefined;
  images: readonly CardImage[] | undefined;
  templates?: readonly Template[] | undefined;
}

/** The desktop fields with their choices: allowed hardware, media by kind, stock cards, templates. */
export function DesktopFormBody<T extends FieldValues>({
  handle,
  type,
  hardwareAllowed,
  currentHardware,
  media,
  images,
  templates,
}: DesktopFormBodyProps<T>) {
  const options = useMemo(() => {
    const out: Record<string, FieldOption[]> = hardwareOptions(
      hardwareAllowed,
      currentHardware,
      type,
    );
    out['guest_properties.viewers'] = out['hardware.interfaces'] ?? [];
    const usable = (media ?? []).filter((item) => item.status === 'downloaded');
    out['hardware.isos'] = usable
      .filter((item) => item.kind === 'iso')
      .map((item) => ({ value: item.id, label: item.name }));
    out['hardware.floppies'] = usable
      .filter((item) => item.kind === 'floppy')
      .map((item) => ({ value: item.id, label: item.name }));
    out.image = (images ?? [])
      .filter((item) => item.type === 'stock')
      .map((item) => ({ value: item.id, label: item.id }));
    if (templates)
      out.template_id = templates.map((item) => ({
        value: item.id,
        label: item.name,
        description: item.description ?? null,
      }));
    return out;
  }, [hardwareAllowed, currentHardware, type, media, images, templates]);

  return (
    <SchemaForm
      handle={handle}
      widgets={desktopWidgets}
      options={options}
      sectionOrder={DESKTOP_SECTION_ORDER}
    />
  );
}
