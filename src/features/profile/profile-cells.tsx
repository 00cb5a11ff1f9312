/**
 * The profile's cell renderers, registered by the x-ui widget names of its schema: usage against
 * the applied quota (`quota`), where the quota comes from (`restriction`), the email state
 * (`verified`), the saved language (`language`), the API key state (`apiKey`), how mails leave
 * the server (`mailDelivery`), the password rules (`passwordPolicy`) and the personal storage
 * (`userStorage`).
 */
import '@mantine/core/styles/Alert.css';
import '@mantine/core/styles/Badge.css';
import '@mantine/core/styles/List.css';
import '@mantine/core/styles/Progress.css';
import { Alert, Badge, Group, List, Progress, Stack, Text } from '@mantine/core';
import { Icon } from '@/components/icon';
import { LANGUAGE_NAMES, matchLanguage } from '@/i18n/languages';
import { formatDate, isPast } from '@/lib/dates';
import { formatNumber } from '@/lib/numbers';
import { formatGigabyteValue } from '@/lib/sizes';
import { useCellText, useEnumText, type CellProps } from '@/resources/cells/cell-registry';

const dash = (
  <Text span c="dimmed" aria-hidden>
    —
  </Text>
);

/** Share of a limit used, 0-100 (a limit of 0 is full as soon as anything is used). */
export function quotaPercent(used: number, limit: number): number {
  if (limit <= 0) return used > 0 ? 100 : 0;
  return Math.min(100, Math.round((used / limit) * 100));
}

/** Colour of a usage level: calm below 70 %, warning below 90 %, red from there. */
export function quotaColor(percent: number): string {
  if (percent >= 90) return 'red';
  if (percent >= 70) return 'yellow';
  return 'teal';
}

/**
 * One usage counter (`used.<counter>`) against the same counter of the record's applied quota
 * (`quota.<counter>`): a labelled bar, or "unlimited" when the quota sets no limit for it.
 */
function QuotaCell({ resource, meta, value, record }: CellProps) {
  const { t, language } = useCellText();
  const counter = meta.path.split('.').pop() ?? meta.path;
  const quota = record.quota;
  const limit =
    quota && typeof quota === 'object' ? (quota as Record<string, unknown>)[counter] : undefined;
  const used = typeof value === 'number' ? value : 0;
  const format = (n: number): string =>
    meta.unit === 'GB' ? formatGigabyteValue(n, language) : formatNumber(n, language);
  if (typeof limit !== 'number')
    return (
      <Text span size="sm" data-testid="quota-unlimited" data-counter={counter}>
        {t('common:profile.quotaUnlimited', { used: format(used) })}
      </Text>
    );
  const percent = quotaPercent(used, limit);
  const text = t('common:profile.quotaOf', { used: format(used), limit: format(limit) });
  return (
    <Stack gap={4} maw={360} data-testid="quota-bar" data-counter={counter}>
      <Text span size="sm">
        {text}
      </Text>
      <Progress.Root
        size="md"
        role="progressbar"
        aria-label={t(`resources:${resource}.fields.${meta.path}`)}
        aria-valuemin={0}
        aria-valuemax={limit}
        aria-valuenow={used}
        aria-valuetext={text}
      >
        <Progress.Section value={percent} color={quotaColor(percent)} withAria={false} />
      </Progress.Root>
    </Stack>
  );
}

/** Where the applied quota comes from: the user's own, their group's or their category's. */
function RestrictionCell({ resource, meta, value }: CellProps) {
  const text = useEnumText(resource, meta.path);
  if (typeof value !== 'string' || !value) return dash;
  return (
    <Badge variant="light" color="gray" data-testid="restriction" data-value={value}>
      {text(value)}
    </Badge>
  );
}

/** The email's state: verified (a flag or the time it was verified) or not yet. */
function VerifiedCell({ value, record }: CellProps) {
  const { t } = useCellText();
  if (typeof record.email !== 'string' || !record.email) return dash;
  const verified = value === true || (typeof value === 'number' && value > 0);
  return (
    <Badge
      variant="light"
      color={verified ? 'green' : 'orange'}
      leftSection={<Icon name={verified ? 'circle-check' : 'alert-triangle'} size={12} />}
      data-testid="email-verified"
      data-value={String(verified)}
    >
      {t(verified ? 'common:profile.verified' : 'common:profile.notVerified')}
    </Badge>
  );
}

/** A language code as the language's own name (Català, Deutsch...). */
function LanguageCell({ value }: CellProps) {
  const language = matchLanguage(typeof value === 'string' ? value : null);
  if (!language) return dash;
  return (
    <Text span size="sm" lang={language.replace('_', '-')}>
      {LANGUAGE_NAMES[language]}
    </Text>
  );
}

/** Whether the user has an API key, and until when it works. */
function ApiKeyCell({ value }: CellProps) {
  const { t } = useCellText();
  const key = (value ?? {}) as { exists?: unknown; expires?: unknown };
  if (key.exists !== true)
    return (
      <Text span size="sm" data-testid="api-key" data-value="none">
        {t('common:profile.apiKeyNone')}
      </Text>
    );
  const expires = typeof key.expires === 'number' && key.expires > 0 ? key.expires : null;
  const expired = isPast(expires);
  return (
    <Text span size="sm" c={expired ? 'red' : undefined} data-testid="api-key" data-value="active">
      {expires === null
        ? t('common:profile.apiKeyActive')
        : t(expired ? 'common:profile.apiKeyExpired' : 'common:profile.apiKeyUntil', {
            date: formatDate(expires),
          })}
    </Text>
  );
}

/**
 * How the server sends mails. Without an SMTP server (SMTP_URL unset) they are written to the
 * server log: said plainly, so nobody waits for a verification mail that never comes.
 */
function MailDeliveryCell({ value }: CellProps) {
  const { t } = useCellText();
  if (value === 'log')
    return (
      <Alert
        color="blue"
        variant="light"
        role="note"
        icon={<Icon name="help" size={18} />}
        data-testid="mail-delivery"
        data-value="log"
      >
        {t('common:profile.mailLog')}
      </Alert>
    );
  if (value !== 'smtp') return dash;
  return (
    <Text span size="sm" data-testid="mail-delivery" data-value="smtp">
      {t('common:profile.mailSmtp')}
    </Text>
  );
}

/** The password rules a new password must follow, in the order they are checked. */
const POLICY_RULES = [
  'length',
  'uppercase',
  'lowercase',
  'digits',
  'special_characters',
  'not_username',
  'old_passwords',
  'expiration',
] as const;

/** The rules of a password policy that apply: a count for most, a flag for `not_username`. */
export function policyRules(policy: unknown): { rule: string; count: number }[] {
  if (!policy || typeof policy !== 'object') return [];
  const values = policy as Record<string, unknown>;
  return POLICY_RULES.flatMap((rule): { rule: string; count: number }[] => {
    const value = values[rule];
    if (rule === 'not_username') return value ? [{ rule, count: 1 }] : [];
    return typeof value === 'number' && value > 0 ? [{ rule, count: value }] : [];
  });
}

function PasswordPolicyCell({ value }: CellProps) {
  const { t } = useCellText();
  const rules = policyRules(value);
  if (rules.length === 0)
    return (
      <Text span size="sm">
        {t('common:profile.policyNone')}
      </Text>
    );
  return (
    <List size="sm" spacing={2} data-testid="password-policy">
      {rules.map(({ rule, count }) => (
        <List.Item key={rule} data-rule={rule}>
          {t(`common:profile.policy.${rule}`, { count })}
        </List.Item>
      ))}
    </List>
  );
}

/** The personal storage's use against its provider quota, when the provider reports one. */
function UserStorageCell({ value }: CellProps) {
  const { t } = useCellText();
  const quota = (value as { provider_quota?: unknown } | null | undefined)?.provider_quota;
  const relative =
    quota && typeof quota === 'object' ? (quota as { relative?: unknown }).relative : undefined;
  if (typeof relative !== 'number') return null;
  const percent = Math.min(100, Math.max(0, Math.round(relative)));
  return (
    <Group gap="xs" wrap="nowrap" maw={360}>
      <Progress
        value={percent}
        color={quotaColor(percent)}
        style={{ flex: 1 }}
        aria-label={t('common:progress', { value: percent })}
      />
      <Text span size="sm">{`${percent} %`}</Text>
    </Group>
  );
}

/** The renderers by the widget names the profile schema uses. */
export const profileCells = {
  quota: QuotaCell,
  restriction: RestrictionCell,
  verified: VerifiedCell,
  language: LanguageCell,
  apiKey: ApiKeyCell,
  mailDelivery: MailDeliveryCell,
  passwordPolicy: PasswordPolicyCell,
  userStorage: UserStorageCell,
} as const;
