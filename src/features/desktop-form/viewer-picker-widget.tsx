import '@mantine/core/styles/Checkbox.css';
import { Checkbox, Stack } from '@mantine/core';
import { useEffect } from 'react';
import { useFormContext, useWatch } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import type { WidgetProps } from '@/resources/form/types';
import {
  guestKey,
  interfacesForViewer,
  needsWireguard,
  ORDERED_VIEWERS,
  toggleViewer,
  viewersForInterfaces,
  WIREGUARD,
  type ViewersMap,
} from './viewer-rules';

/**
 * Viewer checkboxes in the default order. RDP-family viewers need wireguard: choosing one adds the
 * wireguard interface when the user may use it (`options` lists the allowed interface ids); when
 * it is not allowed they are disabled with an explanation. Removing wireguard removes them.
 */
export function ViewerPickerWidget({
  id,
  label,
  description,
  value,
  onChange,
  onBlur,
  error,
  required,
  disabled,
  options,
}: WidgetProps) {
  const { t } = useTranslation();
  const { setValue, control } = useFormContext();
  const interfaces = useWatch({ control, name: 'hardware.interfaces' }) as string[] | undefined;
  const current = (value ?? {}) as ViewersMap;
  const allowedInterfaces = (options ?? []).map((option) => option.value);
  const wireguardAvailable =
    allowedInterfaces.includes(WIREGUARD) || (interfaces ?? []).includes(WIREGUARD);

  useEffect(() => {
    const next = viewersForInterfaces(value as ViewersMap | undefined, interfaces);
    if (next !== value) onChange(next);
  }, [interfaces, value, onChange]);

  const toggle = (viewer: (typeof ORDERED_VIEWERS)[number], checked: boolean): void => {
    const next = toggleViewer(current, viewer, checked);
    if (checked && needsWireguard(viewer)) {
      setValue('hardware.interfaces', interfacesForViewer(interfaces, viewer, allowedInterfaces), {
        shouldDirty: true,
      });
    }
    onChange(next);
  };

  return (
    <Checkbox.Group
      id={id}
      label={label}
      description={description}
      error={error}
      required={required}
      value={Object.keys(current)}
    >
      <Stack gap="xs" mt="xs">
        {ORDERED_VIEWERS.map((viewer) => {
          const blocked = needsWireguard(viewer) && !wireguardAvailable;
          return (
            <Checkbox
              key={viewer}
              value={guestKey(viewer)}
              label={t(`common:viewers.${viewer}`)}
              description={
                needsWireguard(viewer)
                  ? t(
                      blocked
                        ? 'common:desktopForm.viewers.wireguardUnavailable'
                        : 'common:desktopForm.viewers.addsWireguard',
                    )
                  : undefined
              }
              checked={current[guestKey(viewer)] !== undefined}
              onChange={(event) => toggle(viewer, event.currentTarget.checked)}
              onBlur={onBlur}
              disabled={disabled || blocked}
            />
          );
        })}
      </Stack>
    </Checkbox.Group>
  );
}
