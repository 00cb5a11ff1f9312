/**
 * The engine's create and edit pages and the form routes, with what features register for them
 * (form extensions, preview renderers), loaded with the first form opened, not with the lists. The form routes of a resource without roles (the account pages) are
 * pages without login: they stand alone in a centred card, like the login page.
 */
import '@mantine/core/styles/Paper.css';
import type { ReactNode } from 'react';
import { Center, Group, Paper, Stack, Text } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { resourceOf } from '@/generated/resources';
import { ColorSchemeSwitch } from '@/components/color-scheme-switch';
import { LanguageSwitcher } from '@/components/language-switcher';
import { AnswerView } from '@/resources/form/answer-view';
import { DocumentPreview } from '@/resources/form/document-preview';
import { registerFormExtension } from '@/resources/form/form-extension-registry';
import { OperationFormPage as OperationForm } from '@/resources/form/operation-form-page';
import { registerPreview } from '@/resources/form/preview-registry';
import { ResourceFormPage } from '@/resources/form/resource-form-page';
import { desktopFormExtension } from '@/features/desktop-form/desktop-form-extension';
import { registerFormExtension as registerForm } from '@/features/auth/register-form-extension';
import { PasskeyEnrolmentPreview } from '@/features/passkeys/passkey-enrolment-preview';
import { PasskeyStepPreview } from '@/features/passkeys/passkey-step-preview';
import type { PageProps } from './pages';

registerFormExtension('desktopForm', desktopFormExtension);
registerFormExtension('registerForm', registerForm);
registerPreview('document', DocumentPreview);
registerPreview('passkeyStep', PasskeyStepPreview);
registerPreview('passkeyEnrolment', PasskeyEnrolmentPreview);
// An answer shown field by field through the cell renderers (a secret to copy).
registerPreview('fields', ({ resource, type, value }) =>
  type ? <AnswerView resource={resource} type={type} value={value} /> : null,
);

export function CreatePage({ resource }: PageProps) {
  return <ResourceFormPage resource={resource} mode="create" />;
}

export function EditPage({ resource }: PageProps) {
  return <ResourceFormPage resource={resource} mode="edit" />;
}

/** A page without login: the product name, the language and colour switches, and the page. */
function PublicCard({ children }: { children: ReactNode }) {
  const { t } = useTranslation();
  return (
    <Center mih="100vh" p="md">
      <Paper withBorder p="xl" w={560} maw="100%" component="main">
        <Stack>
          <Group justify="space-between" wrap="nowrap">
            <Text fw={700}>{t('common:product')}</Text>
            <Group gap={4} wrap="nowrap">
              <LanguageSwitcher />
              <ColorSchemeSwitch />
            </Group>
          </Group>
          {children}
        </Stack>
      </Paper>
    </Center>
  );
}

export function OperationFormPage({ resource, kind }: PageProps) {
  const page = <OperationForm resource={resource} kind={kind} />;
  return resourceOf(resource)?.meta.roles === null ? <PublicCard>{page}</PublicCard> : page;
}
