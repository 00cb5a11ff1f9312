import '@mantine/core/styles/Radio.css';
import '@mantine/core/styles/RadioCard.css';
import '@mantine/core/styles/SimpleGrid.css';
import { Box, Radio, SimpleGrid } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import type { ImageUpload } from '@/generated/types';
import type { FieldOption, WidgetProps } from '@/resources/form/types';
import { stockGradient } from '@/lib/stock-card';

/** Stock cards have the ids '1'..'48'; uploaded images are not offered here. */
const isStock = (option: FieldOption): boolean => /^\d+$/.test(option.value);

/** Card image: one of the stock cards (`options`, ids '1'..'48'), drawn as gradients. */
export function ImagePickerWidget({
  id,
  label,
  description,
  value,
  onChange,
  error,
  disabled,
  options,
}: WidgetProps) {
  const { t } = useTranslation();
  const current = value as ImageUpload | undefined;
  const selected = current?.type === 'stock' && current.id ? current.id : null;
  return (
    <Radio.Group
      id={id}
      label={label}
      description={description ?? t('common:desktopForm.image.hint')}
      error={error}
      value={selected}
      onChange={(next) => onChange({ type: 'stock', id: next })}
    >
      <SimpleGrid cols={{ base: 4, sm: 8, md: 12 }} spacing={6} mt="xs">
        {(options ?? []).filter(isStock).map((option) => (
          <Radio.Card
            key={option.value}
            value={option.value}
            radius="sm"
            p={2}
            disabled={disabled}
            aria-label={t('common:desktopForm.image.card', { id: option.value })}
            data-testid={`card-image-${option.value}`}
          >
            <Box h={36} style={{ background: stockGradient(option.value), borderRadius: 4 }} />
          </Radio.Card>
        ))}
      </SimpleGrid>
    </Radio.Group>
  );
}
