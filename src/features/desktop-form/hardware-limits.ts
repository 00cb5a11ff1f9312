/**
 * What the user may pick: limits from the applied quota (or the generated default
 * quota when there is none), choices from the allowed hardware lists.
 */
import { constants } from '@/generated/constants';
import { fields, type FieldMeta } from '@/generated/fields';
import type { DesktopHardware, HardwareAllowed, HardwareAllowedItem } from '@/generated/types';
import type { FieldOption, FieldOverrides } from '@/resources/form/types';

export interface HardwareLimits {
  memory: number;
  vcpus: number;
  desktops_disk_size: number;
}

const defaults = constants.HardwareAllowed;

/** Limits for the pickers: `limits` when the server sends it, else the quota, else the defaults. */
export function hardwareLimits(allowed: HardwareAllowed | null | undefined): HardwareLimits {
  const sent = (allowed as { limits?: Partial<HardwareLimits> } | null | undefined)?.limits;
  const quota = allowed?.quota || undefined;
  return {
    memory: sent?.memory ?? quota?.memory ?? defaults.defaultMemoryGB.value,
    vcpus: sent?.vcpus ?? quota?.vcpus ?? defaults.defaultVcpus.value,
    desktops_disk_size:
      sent?.desktops_disk_size ?? quota?.desktops_disk_size ?? defaults.defaultDiskGB.value,
  };
}

const LIMIT_OF: Readonly<Record<string, keyof HardwareLimits>> = {
  'hardware.memory': 'memory',
  'hardware.vcpus': 'vcpus',
  'hardware.disk_size': 'desktops_disk_size',
};

/** Field overrides capping memory, vcpus and disk size at the user's limits (never above the schema). */
export function limitOverrides(
  limits: HardwareLimits,
  type: 'DesktopCreate' | 'DesktopUpdate',
): FieldOverrides {
  const out: Record<string, Partial<FieldMeta>> = {};
  for (const meta of fields[type] as readonly FieldMeta[]) {
    const key = LIMIT_OF[meta.path];
    if (key) out[meta.path] = { maximum: Math.min(meta.maximum ?? Infinity, limits[key]) };
  }
  return out;
}

function toOption(item: HardwareAllowedItem): FieldOption {
  return { value: item.id, label: item.name, description: item.description ?? null };
}

function allowedItems(list: readonly HardwareAllowedItem[] | undefined): HardwareAllowedItem[] {
  return (list ?? []).filter((item) => item.allowed !== false);
}

/**
 * Choices of the hardware fields backed by an allowed list (`x-ui.options: hardwareAllowed`, and any
 * other `hardware.<key>` the answer carries, such as disk_bus). Values the desktop already uses stay
 * choosable.
 */
export function hardwareOptions(
  allowed: HardwareAllowed | null | undefined,
  current: DesktopHardware | undefined,
  type: 'DesktopCreate' | 'DesktopUpdate',
): Record<string, FieldOption[]> {
  const out: Record<string, FieldOption[]> = {};
  if (!allowed) return out;
  for (const meta of fields[type] as readonly FieldMeta[]) {
    if (!meta.path.startsWith('hardware.')) continue;
    const key = meta.path.slice('hardware.'.length);
    const list = (allowed as Record<string, unknown>)[key];
    if (!Array.isArray(list)) continue;
    const options = allowedItems(list as HardwareAllowedItem[]).map(toOption);
    const used = (current as Record<string, unknown> | undefined)?.[key];
    for (const value of Array.isArray(used) ? used : used === undefined ? [] : [used]) {
      if (typeof value === 'string' && !options.some((option) => option.value === value))
        options.push({ value, label: value });
    }
    out[meta.path] = options;
  }
  out['hardware.reservables'] = allowedItems(allowed.reservables?.vgpus).map(toOption);
  return out;
}

/** Allowed interface ids (for the wireguard rule). */
export function allowedInterfaceIds(allowed: HardwareAllowed | null | undefined): string[] {
  return allowedItems(allowed?.interfaces).map((item) => item.id);
}
