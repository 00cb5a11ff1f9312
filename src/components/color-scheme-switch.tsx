import { NativeSelect, useMantineColorScheme, type MantineColorScheme } from '@mantine/core';
import { useTranslation } from 'react-i18next';

const SCHEMES: MantineColorScheme[] = ['light', 'dark', 'auto'];

/** Light / dark / auto colour scheme switch (stored by Mantine in localStorage). */
export function ColorSchemeSwitch() {
  const { t } = useTranslation();
  const { colorScheme, setColorScheme } = useMantineColorScheme();
  return (
    <NativeSelect
      aria-label={t('common:colorScheme.label')}
      size="xs"
      value={colorScheme}
      data-testid="color-scheme-switch"
      onChange={(event) => setColorScheme(event.currentTarget.value as MantineColorScheme)}
      data={SCHEMES.map((scheme) => ({ value: scheme, label: t(`common:colorScheme.${scheme}`) }))}
    />
  );
}
