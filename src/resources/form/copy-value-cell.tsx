/**
 * A value the user copies elsewhere (`x-ui.widget: "copy"`: a migration code, an API key): shown
 * whole, selectable, with a copy button that says when it copied.
 */
import '@mantine/core/styles/Code.css';
import { Button, Code, CopyButton, Stack } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { Icon } from '@/components/icon';
import type { CellProps } from '../cells/cell-registry';

export function CopyValueCell({ meta, value }: CellProps) {
  const { t } = useTranslation();
  if (typeof value !== 'string' || !value) return null;
  return (
    <Stack gap="xs" align="flex-start">
      <Code
        block
        style={{ wordBreak: 'break-all', whiteSpace: 'pre-wrap' }}
        data-testid={`copy-${meta.path}`}
      >
        {value}
      </Code>
      <CopyButton value={value}>
        {({ copied, copy }) => (
          <Button
            variant="light"
            size="xs"
            onClick={copy}
            leftSection={<Icon name={copied ? 'check' : 'copy'} size={14} />}
            aria-live="polite"
          >
            {t(copied ? 'common:form.copied' : 'common:form.copy')}
          </Button>
        )}
      </CopyButton>
    </Stack>
  );
}
