import '@mantine/core/styles/ActionIcon.css';
import '@mantine/core/styles/Code.css';
import '@mantine/core/styles/Tooltip.css';
import { ActionIcon, Code, CopyButton, Group, Tooltip } from '@mantine/core';
import { Icon } from '@/components/icon';
import { useCellText } from './cell-text';
import { empty } from './empty-cell';
import type { CellProps } from './cell-types';

/** A value to copy (a secret shown once, a code): in full, monospaced, with a copy button. */
export function CopyCell({ value }: CellProps) {
  const { t } = useCellText();
  if (typeof value !== 'string' || !value) return empty;
  return (
    <Group gap="xs" wrap="nowrap" align="flex-start">
      <Code
        block
        style={{ flex: 1, minWidth: 0, wordBreak: 'break-all', whiteSpace: 'pre-wrap' }}
        data-testid="copy-value"
      >
        {value}
      </Code>
      <CopyButton value={value}>
        {({ copied, copy }) => (
          <Tooltip label={t(copied ? 'common:copy.copied' : 'common:copy.copy')} withArrow>
            <ActionIcon
              variant={copied ? 'filled' : 'default'}
              color={copied ? 'teal' : undefined}
              size="lg"
              onClick={copy}
              aria-label={t(copied ? 'common:copy.copied' : 'common:copy.copy')}
              data-testid="copy-button"
            >
              <Icon name={copied ? 'check' : 'copy'} size={16} />
            </ActionIcon>
          </Tooltip>
        )}
      </CopyButton>
    </Group>
  );
}
