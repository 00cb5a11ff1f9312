/** Reference data both desktop pages need: allowed hardware (with limits), media and stock cards. */
import { useQuery } from '@tanstack/react-query';
import { useMemo } from 'react';
import type { FieldOverrides } from '@/resources/form/types';
import { DESKTOP_LAYOUT } from './desktop-form-body';
import { hardwareLimits, limitOverrides } from './hardware-limits';
import { desktopFormQueries } from './queries';

export function useDesktopFormData(type: 'DesktopCreate' | 'DesktopUpdate', enabled = true) {
  const hardware = useQuery({ ...desktopFormQueries.hardwareAllowed(), enabled });
  const media = useQuery({ ...desktopFormQueries.media(), enabled });
  const images = useQuery({ ...desktopFormQueries.images(), enabled });
  const overrides = useMemo<FieldOverrides>(
    () => ({ ...limitOverrides(hardwareLimits(hardware.data), type), ...DESKTOP_LAYOUT }),
    [hardware.data, type],
  );
  return {
    hardwareAllowed: hardware.data,
    media: media.data,
    images: images.data,
    overrides,
    loading: hardware.isLoading,
    error: hardware.error ?? null,
  };
}
