/**
 * The desktop form extension (`x-ui.form: desktopForm` on the create and update bodies): the
 * choices the schema cannot list (allowed hardware within the user's limits, templates, media by
 * kind, stock cards), the widgets of the desktop fields, the documented defaults of a new desktop,
 * the prefill from the chosen template, and the server rule the state rule does not cover.
 */
import { useQuery } from '@tanstack/react-query';
import { useEffect, useMemo } from 'react';
import { useWatch, type FieldValues } from 'react-hook-form';
import { inSet, mediaStatuses } from '@/generated/policy';
import type { DesktopHardware } from '@/generated/types';
import { isDesktopInfo } from '@/lib/records';
import type { FormExtension, FormMode } from '@/resources/form/form-extension-registry';
import type { FieldOption } from '@/resources/form/types';
import type { SchemaFormHandle } from '@/resources/form/use-schema-form';
import { NEW_DESKTOP_DEFAULTS, valuesFromInfo } from './desktop-values';
import { hardwareLimits, hardwareOptions, limitOverrides } from './hardware-limits';
import { ImagePickerWidget } from './image-picker-widget';
import { MediaWidget } from './media-widget';
import { desktopFormQueries } from './queries';
import { ReservablesWidget } from './reservables-widget';
import { TemplatePickerWidget } from './template-picker-widget';
import { ViewerPickerWidget } from './viewer-picker-widget';

const typeOf = (mode: FormMode) => (mode === 'create' ? 'DesktopCreate' : 'DesktopUpdate');

function useDesktopFormData(mode: FormMode, enabled: boolean) {
  const hardware = useQuery({ ...desktopFormQueries.hardwareAllowed(), enabled });
  const media = useQuery({ ...desktopFormQueries.media(), enabled });
  const images = useQuery({ ...desktopFormQueries.images(), enabled });
  const templates = useQuery({
    ...desktopFormQueries.templates(),
    enabled: enabled && mode === 'create',
  });
  const overrides = useMemo(
    () => limitOverrides(hardwareLimits(hardware.data), typeOf(mode)),
    [hardware.data, mode],
  );
  const options = useMemo(() => {
    const fixed: Record<string, FieldOption[]> = {};
    const usable = (media.data ?? []).filter((item) => inSet(mediaStatuses.usable, item.status));
    fixed['hardware.isos'] = usable
      .filter((item) => item.kind === 'iso')
      .map((item) => ({ value: item.id, label: item.name }));
    fixed['hardware.floppies'] = usable
      .filter((item) => item.kind === 'floppy')
      .map((item) => ({ value: item.id, label: item.name }));
    fixed.image = (images.data ?? []).flatMap((item) =>
      item.type === 'stock' && item.id ? [{ value: item.id, label: item.id }] : [],
    );
    if (templates.data)
      fixed.template_id = templates.data.map((item) => ({
        value: item.id,
        label: item.name,
        description: item.description ?? null,
      }));
    // Hardware choices keep the values the desktop already uses, so they depend on the form's values.
    return (values: FieldValues) => {
      const out: Record<string, FieldOption[]> = {
        ...hardwareOptions(
          hardware.data,
          values.hardware as DesktopHardware | undefined,
          typeOf(mode),
        ),
        ...fixed,
      };
      out['guest_properties.viewers'] = out['hardware.interfaces'] ?? [];
      return out;
    };
  }, [hardware.data, media.data, images.data, templates.data, mode]);
  return {
    loading: hardware.isLoading,
    error: hardware.error ?? templates.error ?? null,
    overrides,
    options,
  };
}

/** New desktop: the chosen template's name, description, hardware and viewers, unless edited. */
function useTemplatePrefill(handle: SchemaFormHandle<FieldValues>, mode: FormMode) {
  const { form } = handle;
  const templateId = useWatch({ control: form.control, name: 'template_id' }) as string | undefined;
  const info = useQuery({
    ...desktopFormQueries.info(templateId ?? ''),
    enabled: mode === 'create' && !!templateId,
  });
  useEffect(() => {
    if (!info.data) return;
    const values = valuesFromInfo(info.data);
    const { dirtyFields } = form.formState;
    const opts = { shouldDirty: false, shouldValidate: false } as const;
    if (!dirtyFields.name) form.setValue('name', values.name ?? '', opts);
    if (!dirtyFields.description) form.setValue('description', values.description, opts);
    if (values.hardware) form.setValue('hardware', values.hardware, opts);
    if (values.guest_properties) form.setValue('guest_properties', values.guest_properties, opts);
  }, [info.data, form]);
}

export const desktopFormExtension: FormExtension = {
  widgets: {
    templatePicker: TemplatePickerWidget,
    viewerPicker: ViewerPickerWidget,
    reservables: ReservablesWidget,
    media: MediaWidget,
    imagePicker: ImagePickerWidget,
  },
  useFormData: useDesktopFormData,
  defaultValues: () => structuredClone(NEW_DESKTOP_DEFAULTS),
  // Other records (a deployment's show answer) take the page's default: their fields by name.
  toFormValues: (show) => (isDesktopInfo(show) ? valuesFromInfo(show) : null),
  useFormEffects: useTemplatePrefill,
  // A server's hardware and viewers cannot be edited.
  editBlocker: (show) => (show.server === true ? 'common:desktopForm.serverNotEditable' : null),
};
