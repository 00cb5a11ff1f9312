import { Alert, Button, Center, Group, Loader, Stack, Title } from '@mantine/core';
import { useNotification, useUpdate } from '@refinedev/core';
import { useQuery } from '@tanstack/react-query';
import { useEffect, useMemo } from 'react';
import { useWatch } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { DesktopUpdate } from '@/generated/validators';
import type { DesktopInfo } from '@/generated/types';
import { SubmitButton } from '@/components/submit-button';
import { showError, translateError } from '@/lib/error-display';
import { ruleAllows } from '@/resources/state-actions';
import { useSchemaForm } from '@/resources/form/use-schema-form';
import { DesktopFormBody } from './desktop-form-body';
import { changedSections, valuesFromInfo, type EditDesktopValues } from './desktop-values';
import { DESKTOPS_PATH } from './paths';
import { desktopFormQueries } from './queries';
import { useDesktopFormData } from './use-desktop-form-data';

const CODE_FIELDS = {
  new_desktop_name_exists: 'name',
  one_viewer_minimum: 'guest_properties.viewers',
} as const;

/** Why a desktop cannot be edited now (spec section 4 rules), or null. */
export function editBlocker(
  info: Pick<DesktopInfo, 'state' | 'server'>,
): 'not_stopped' | 'server' | null {
  if (info.server) return 'server';
  if (!ruleAllows('desktops', 'edit', info as Record<string, unknown>)) return 'not_stopped';
  return null;
}

/** Edit desktop (/domain/edit?id=...): same sections as new minus template; sends changed sections. */
export function EditDesktopPage() {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const { open } = useNotification();
  const [search] = useSearchParams();
  const id = search.get('id') ?? '';
  const info = useQuery({ ...desktopFormQueries.info(id), enabled: !!id });
  const blocker = info.data ? editBlocker(info.data) : null;
  const data = useDesktopFormData('DesktopUpdate', !!info.data && !blocker);
  const initial = useMemo<EditDesktopValues | null>(
    () => (info.data ? valuesFromInfo(info.data) : null),
    [info.data],
  );
  const handle = useSchemaForm<EditDesktopValues>({
    type: 'DesktopUpdate',
    validate: DesktopUpdate,
    resource: 'desktops',
    overrides: data.overrides,
  });
  const { form } = handle;
  const hardware = useWatch({ control: form.control, name: 'hardware' });

  useEffect(() => {
    if (initial) form.reset(initial);
  }, [initial, form]);

  const { mutateAsync } = useUpdate();
  const submit = form.handleSubmit(async (values) => {
    const changed = initial ? changedSections(initial, values) : values;
    try {
      if (Object.keys(changed).length) {
        await mutateAsync({
          resource: 'desktops',
          id,
          values: changed,
          successNotification: false,
          errorNotification: false,
        });
        open?.({
          type: 'success',
          message: t('common:desktopForm.saved', { name: values.name ?? initial?.name ?? '' }),
        });
      }
      await navigate(DESKTOPS_PATH);
    } catch (error) {
      if (!handle.applyServerErrors(error, CODE_FIELDS)) showError(error);
    }
  }, handle.focusFirstError);

  const back = (
    <Group>
      <Button component={Link} to={DESKTOPS_PATH} variant="default">
        {t('common:desktopForm.back')}
      </Button>
    </Group>
  );
  const title = (
    <Title order={1} size="h2" id="edit-desktop-title">
      {t('resources:desktops.actions.edit')}
      {info.data ? ` · ${info.data.name}` : ''}
    </Title>
  );

  if (!id || info.error || blocker) {
    const message = !id
      ? t('common:desktopForm.missingId')
      : blocker === 'server'
        ? t('common:desktopForm.serverNotEditable')
        : blocker === 'not_stopped'
          ? t('errors:desktop_not_stopped')
          : translateError(info.error as never);
    return (
      <Stack gap="md">
        {title}
        <Alert color="orange" role="alert" data-testid="edit-blocked">
          {message}
        </Alert>
        {back}
      </Stack>
    );
  }
  if (!info.data || data.loading || !initial)
    return (
      <Center mih="40vh">
        <Loader aria-label={t('common:loading')} />
      </Center>
    );

  return (
    <form onSubmit={(event) => void submit(event)} noValidate aria-labelledby="edit-desktop-title">
      <Stack gap="md" maw={900}>
        {title}
        {info.data.limited_hardware && (
          <Alert color="yellow" role="status">
            {t('common:desktopForm.limitedHardware')}
          </Alert>
        )}
        <DesktopFormBody
          handle={handle}
          type="DesktopUpdate"
          hardwareAllowed={data.hardwareAllowed}
          currentHardware={hardware ?? initial.hardware}
          media={data.media}
          images={data.images}
        />
        <Group justify="flex-end">
          <Button component={Link} to={DESKTOPS_PATH} variant="default">
            {t('common:actions.cancel')}
          </Button>
          <SubmitButton loading={form.formState.isSubmitting} disabled={!form.formState.isDirty}>
            {t('common:desktopForm.save')}
          </SubmitButton>
        </Group>
      </Stack>
    </form>
  );
}
