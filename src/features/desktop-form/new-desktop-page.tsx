import { Alert, Button, Center, Group, Loader, Stack, Title } from '@mantine/core';
import { useCreate, useNotification } from '@refinedev/core';
import { useQuery } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { useWatch } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { Link, useNavigate } from 'react-router';
import { DesktopCreate } from '@/generated/validators';
import { SubmitButton } from '@/components/submit-button';
import { showError, translateError } from '@/lib/error-display';
import { request } from '@/providers/http-client';
import { useSchemaForm } from '@/resources/form/use-schema-form';
import { DesktopFormBody } from './desktop-form-body';
import { NEW_DESKTOP_DEFAULTS, valuesFromInfo, type NewDesktopValues } from './desktop-values';
import { DESKTOPS_PATH } from './paths';
import { desktopFormQueries } from './queries';
import { useDesktopFormData } from './use-desktop-form-data';

/** Codes that belong to one field of the form. */
const CODE_FIELDS = {
  new_desktop_name_exists: 'name',
  one_viewer_minimum: 'guest_properties.viewers',
} as const;

/** New desktop (/desktops/new): quota check, template prefill, hardware within limits, create. */
export function NewDesktopPage() {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const { open } = useNotification();
  const [quotaOk, setQuotaOk] = useState(false);

  useEffect(() => {
    let active = true;
    request('desktops.checkQuota').then(
      () => active && setQuotaOk(true),
      (error: unknown) => {
        if (!active) return;
        showError(error);
        void navigate(DESKTOPS_PATH);
      },
    );
    return () => {
      active = false;
    };
  }, [navigate]);

  const data = useDesktopFormData('DesktopCreate', quotaOk);
  const templates = useQuery({ ...desktopFormQueries.templates(), enabled: quotaOk });
  const handle = useSchemaForm<NewDesktopValues>({
    type: 'DesktopCreate',
    validate: DesktopCreate,
    resource: 'desktops',
    defaultValues: NEW_DESKTOP_DEFAULTS,
    overrides: data.overrides,
  });
  const { form } = handle;
  const templateId = useWatch({ control: form.control, name: 'template_id' });
  const hardware = useWatch({ control: form.control, name: 'hardware' });
  const info = useQuery({
    ...desktopFormQueries.info(templateId ?? ''),
    enabled: quotaOk && !!templateId,
  });

  useEffect(() => {
    if (!info.data) return;
    const values = valuesFromInfo(info.data);
    const { dirtyFields } = form.formState;
    const opts = { shouldDirty: false, shouldValidate: false } as const;
    if (!dirtyFields.name) form.setValue('name', values.name ?? '', opts);
    if (!dirtyFields.description) form.setValue('description', values.description, opts);
    if (values.hardware) form.setValue('hardware', values.hardware, opts);
    if (values.guest_properties) form.setValue('guest_properties', values.guest_properties, opts);
  }, [info.data, form]);

  const { mutateAsync } = useCreate();
  const submit = form.handleSubmit(async (values) => {
    try {
      await mutateAsync({
        resource: 'desktops',
        values,
        successNotification: false,
        errorNotification: false,
      });
      open?.({ type: 'success', message: t('common:desktopForm.created', { name: values.name }) });
      await navigate(DESKTOPS_PATH);
    } catch (error) {
      if (!handle.applyServerErrors(error, CODE_FIELDS)) showError(error);
    }
  }, handle.focusFirstError);

  if (!quotaOk || data.loading)
    return (
      <Center mih="40vh">
        <Loader aria-label={t('common:loading')} />
      </Center>
    );
  return (
    <form onSubmit={(event) => void submit(event)} noValidate aria-labelledby="new-desktop-title">
      <Stack gap="md" maw={900}>
        <Title order={1} size="h2" id="new-desktop-title">
          {t('resources:desktops.actions.create')}
        </Title>
        {(data.error ?? templates.error ?? info.error) && (
          <Alert color="red" role="alert">
            {translateError((data.error ?? templates.error ?? info.error) as never)}
          </Alert>
        )}
        <DesktopFormBody
          handle={handle}
          type="DesktopCreate"
          hardwareAllowed={data.hardwareAllowed}
          currentHardware={hardware}
          media={data.media}
          images={data.images}
          templates={templates.data}
        />
        <Group justify="flex-end">
          <Button component={Link} to={DESKTOPS_PATH} variant="default">
            {t('common:actions.cancel')}
          </Button>
          <SubmitButton loading={form.formState.isSubmitting}>
            {t('common:desktopForm.create')}
          </SubmitButton>
        </Group>
      </Stack>
    </form>
  );
}
