/**
 * Form values of the desktop form: the documented defaults of a new desktop and the values from
 * `GET /domain/info` (template prefill and edit).
 */
import { fields, type FieldMeta } from '@/generated/fields';
import type {
  DeploymentInfo,
  DesktopCreate,
  DesktopHardware,
  DesktopInfo,
  DesktopUpdate,
  ImageUpload,
} from '@/generated/types';
import { pruneEmpty } from '@/resources/form/resolver';
import { pickFormValues } from '@/resources/form/form-values';
import { constants } from '@/generated/constants';
import { NEW_DESKTOP_VIEWERS, viewersMap } from './viewer-rules';

/** Values of the new-desktop form (template_id may still be empty). */
export type NewDesktopValues = Omit<DesktopCreate, 'template_id'> & { template_id?: string };
export type EditDesktopValues = DesktopUpdate;

/**
 * Spec section 9: a new desktop's hardware (`x-constants.newDesktopHardware` of the desktop
 * schema) and viewers (the viewer-defaults schema).
 */
const { vcpus, memory, disk_size, boot_order } = constants.desktops.newDesktopHardware.value;
export const NEW_DESKTOP_DEFAULTS: NewDesktopValues = {
  template_id: '',
  name: '',
  hardware: { vcpus, memory, disk_size, boot_order: [...boot_order] },
  guest_properties: { viewers: viewersMap(NEW_DESKTOP_VIEWERS) },
};

/** Hardware keys the form edits: the visible `hardware.*` fields of the generated metadata. */
export const FORM_HARDWARE_KEYS: readonly string[] = (fields.DesktopCreate as readonly FieldMeta[])
  .filter((meta) => !meta.hidden && meta.path.startsWith('hardware.'))
  .map((meta) => meta.path.slice('hardware.'.length));

/** A read answer the form's values come from: a desktop's or template's info, or a deployment's. */
export type FormSource = DesktopInfo | DeploymentInfo;

/** True for an answer that carries a desktop's settings (a name and a hardware object). */
export function isFormSource(record: object): record is FormSource {
  const r = record as { name?: unknown; hardware?: unknown };
  return typeof r.name === 'string' && !!r.hardware && typeof r.hardware === 'object';
}

/** Interface ids: a stored list may name them as `{ id, mac }`. */
function interfaceIds(list: unknown): string[] | undefined {
  return Array.isArray(list)
    ? list.flatMap((item: unknown) =>
        typeof item === 'string'
          ? [item]
          : item && typeof item === 'object' && typeof (item as { id?: unknown }).id === 'string'
            ? [(item as { id: string }).id]
            : [],
      )
    : undefined;
}

function mediaRefs(list: unknown): { id: string }[] | undefined {
  return Array.isArray(list)
    ? list
        .filter(
          (item): item is { id: string } => !!item && typeof item === 'object' && 'id' in item,
        )
        .map((item) => ({ id: item.id }))
    : undefined;
}

/** The form's hardware from a stored hardware object (memory already in GB). */
export function formHardware(
  hardware: FormSource['hardware'],
  reservables?: DesktopInfo['reservables'],
): DesktopHardware {
  const source = (hardware ?? {}) as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const key of FORM_HARDWARE_KEYS) if (source[key] !== undefined) out[key] = source[key];
  if (out.interfaces !== undefined) out.interfaces = interfaceIds(out.interfaces);
  if (out.isos !== undefined) out.isos = mediaRefs(out.isos);
  if (out.floppies !== undefined) out.floppies = mediaRefs(out.floppies);
  out.reservables ??= reservables ?? { vgpus: null };
  return out as DesktopHardware;
}

/** The editable image of an info answer (`_default` and other template cards are kept as they are). */
export function formImage(image: DesktopInfo['image']): ImageUpload | undefined {
  return image ? { type: image.type === 'user' ? 'user' : 'stock', id: image.id } : undefined;
}

/**
 * Values shared by template prefill and edit, from `GET /domain/info/{id}`: every field of the
 * update form the answer carries, with the hardware, guest properties and card image in the shape
 * the form edits.
 */
export function valuesFromInfo(info: FormSource): EditDesktopValues {
  const gp = info.guest_properties ?? {};
  const guest = pruneEmpty({
    fullscreen: gp.fullscreen,
    credentials: gp.credentials,
    viewers: gp.viewers,
  });
  const {
    image: _image,
    description: _description,
    ...picked
  } = pickFormValues(fields.DesktopUpdate, info);
  const image = formImage(info.image);
  return {
    ...picked,
    name: info.name,
    ...(info.description ? { description: info.description } : {}),
    guest_properties: guest,
    hardware: formHardware(info.hardware, info.reservables),
    ...(image ? { image } : {}),
  };
}
