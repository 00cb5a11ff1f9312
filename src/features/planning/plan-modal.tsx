/**
 * The plan modal: create a plan (a profile of the card available between two times) or edit one
 * (its profile and times), and delete it (which also deletes the bookings made on it). Before it
 * sends, the form checks the planner rules of the schema; a refused call shows its code on the
 * field its rule names, else in the form's alert. Times are local, sent in UTC.
 */
import '@mantine/core/styles/Modal.css';
import '@mantine/core/styles/ModalBase.css';
import '@mantine/core/styles/Overlay.css';
import { useState, type FormEvent } from 'react';
import { Alert, Button, Group, Modal, Select, Stack } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { InlineDeleteConfirm } from '@/components/inline-delete-confirm';
import { fields } from '@/generated/fields';
import type { PlannerEvent, ReservableSubitem } from '@/generated/types';
import { DateTimeStepInput } from '@/components/calendar/date-time-step-input';
import { parseWireDate, toWireDate } from '@/lib/dates';
import { errorMessageKey, showError, type DisplayableError } from '@/lib/error-display';
import { useSessionState } from '@/lib/session-state';
import type { OtherEvent } from '@/lib/time-rules';
import { request } from '@/providers/http-client';
import { resourceKeyPrefix } from '@/providers/live-provider';
import { usableOperation } from '@/resources/actions/available-actions';
import { planCodeParams, planFailures, planFieldOfCode, type PlanFormType } from './plan-rules';
import type { ItemType } from './queries';

export type PlanModalState =
  | { mode: 'create'; start: Date; end: Date; subitemId: string | null }
  | { mode: 'edit'; plan: PlannerEvent };

export interface PlanModalProps {
  state: PlanModalState;
  itemType: ItemType;
  itemId: string;
  profiles: readonly ReservableSubitem[];
  /** The card's plans (a plan must not overlap them). */
  others: readonly OtherEvent[];
  onClose: () => void;
}

type Field = 'subitem_id' | 'start' | 'end';

const CREATE_STEP = fields.PlannerEventCreate.find((meta) => meta.path === 'start')?.step ?? 1;
const UPDATE_STEP = fields.PlannerEventUpdate.find((meta) => meta.path === 'start')?.step ?? 1;

export function PlanModal({ state, itemType, itemId, profiles, others, onClose }: PlanModalProps) {
  const { t } = useTranslation();
  const queryClient = useQueryClient();
  const role = useSessionState().user?.role_id ?? null;
  const editing = state.mode === 'edit' ? state.plan : null;
  const form: PlanFormType = editing ? 'PlannerEventUpdate' : 'PlannerEventCreate';
  const [subitem, setSubitem] = useState<string | null>(
    editing
      ? editing.subitem_id
      : state.mode === 'create'
        ? // A single profile starts chosen.
          (state.subitemId ?? (profiles.length === 1 ? (profiles[0]?.id ?? null) : null))
        : null,
  );
  const [start, setStart] = useState<Date | null>(
    editing ? parseWireDate(editing.start) : state.mode === 'create' ? state.start : null,
  );
  const [end, setEnd] = useState<Date | null>(
    editing ? parseWireDate(editing.end) : state.mode === 'create' ? state.end : null,
  );
  const [errors, setErrors] = useState<Partial<Record<Field, string>>>({});
  const [alert, setAlert] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const canDelete = !!editing && usableOperation('planning', 'delete', role) !== null;
  const label = (field: Field): string => t(`resources:planning.fields.${field}`);

  const check = (): boolean => {
    const next: Partial<Record<Field, string>> = {};
    const required = (field: Field) => t('errors:validation.required', { property: label(field) });
    if (!subitem) next.subitem_id = required('subitem_id');
    if (!start) next.start = required('start');
    if (!end) next.end = required('end');
    let formAlert: string | null = null;
    if (start && end)
      for (const failure of planFailures(
        form,
        { start, end },
        { now: Date.now(), others, ignoreId: editing?.id },
      )) {
        const text = t(errorMessageKey({ description_code: failure.code }).key, failure.params);
        if (failure.field === 'start' || failure.field === 'end') next[failure.field] ??= text;
        else formAlert ??= text;
      }
    setErrors(next);
    setAlert(formAlert);
    return Object.keys(next).length === 0 && formAlert === null;
  };

  const fail = (error: unknown): void => {
    const err = (error ?? {}) as DisplayableError;
    const code = err.description_code ?? err.error ?? null;
    const field = planFieldOfCode(form, code);
    const text = t(errorMessageKey(err).key, {
      ...planCodeParams(form, code),
      ...(err.params ?? {}),
    });
    if (field === 'start' || field === 'end') setErrors({ [field]: text });
    else if (err.statusCode === 401 || err.statusCode === 500 || err.statusCode === 503)
      showError(error);
    else setAlert(text);
  };

  const done = async (message: string): Promise<void> => {
    await queryClient.invalidateQueries({ queryKey: resourceKeyPrefix('planning') });
    // Plans move the availability the booking calendars show.
    await queryClient.invalidateQueries({ queryKey: resourceKeyPrefix('bookings') });
    notifications.show({ color: 'green', message });
    onClose();
  };

  const submit = async (event: FormEvent): Promise<void> => {
    event.preventDefault();
    if (!check() || !subitem || !start || !end) return;
    setBusy(true);
    try {
      const span = { start: toWireDate(start), end: toWireDate(end) };
      if (editing)
        await request('planning.update', {
          params: { id: editing.id },
          body: { subitem_id: subitem, ...span },
        });
      else
        await request('planning.create', {
          body: { item_type: itemType, item_id: itemId, subitem_id: subitem, ...span },
        });
      await done(t(editing ? 'common:planning.updated' : 'common:planning.created'));
    } catch (error) {
      fail(error);
    } finally {
      setBusy(false);
    }
  };

  const remove = async (): Promise<void> => {
    if (!editing) return;
    setBusy(true);
    try {
      await request('planning.delete', { params: { id: editing.id } });
      await done(t('common:planning.deleted'));
    } catch (error) {
      fail(error);
    } finally {
      setBusy(false);
    }
  };

  const step = editing ? UPDATE_STEP : CREATE_STEP;
  return (
    <Modal
      opened
      onClose={onClose}
      title={t(editing ? 'common:planning.modal.edit' : 'common:planning.modal.create')}
      closeButtonProps={{ 'aria-label': t('common:actions.close') }}
      data-testid="plan-modal"
      data-mode={state.mode}
    >
      <form onSubmit={(event) => void submit(event)} noValidate data-testid="plan-form">
        <Stack gap="sm">
          <Select
            label={label('subitem_id')}
            data={profiles.map((profile) => ({
              value: profile.id,
              label:
                typeof profile.units === 'number'
                  ? t('common:planning.profileUnits', { name: profile.name, count: profile.units })
                  : profile.name,
            }))}
            value={subitem}
            onChange={setSubitem}
            error={errors.subitem_id}
            required
            allowDeselect={false}
            comboboxProps={{ withinPortal: true }}
            data-testid="plan-profile"
          />
          <DateTimeStepInput
            label={label('start')}
            value={start}
            onChange={setStart}
            step={step}
            error={errors.start}
            {...(editing ? {} : { minDate: new Date() })}
            required
            testId="plan-start"
          />
          <DateTimeStepInput
            label={label('end')}
            value={end}
            onChange={setEnd}
            step={step}
            error={errors.end}
            minDate={start ?? undefined}
            required
            testId="plan-end"
          />
          {alert && (
            <Alert color="red" role="alert" data-testid="plan-alert">
              {alert}
            </Alert>
          )}
          {confirming ? (
            <InlineDeleteConfirm
              title={t('common:planning.deleteTitle')}
              question={t('common:planning.deleteConfirm')}
              confirmLabel={t('common:actions.delete')}
              busy={busy}
              onCancel={() => setConfirming(false)}
              onConfirm={() => void remove()}
              testId="plan-delete-confirm"
            />
          ) : (
            <Group justify="space-between" gap="xs">
              {canDelete ? (
                <Button
                  color="red"
                  variant="light"
                  onClick={() => setConfirming(true)}
                  data-testid="plan-delete"
                >
                  {t('common:actions.delete')}
                </Button>
              ) : (
                <span />
              )}
              <Group gap="xs">
                <Button variant="default" onClick={onClose} disabled={busy}>
                  {t('common:actions.cancel')}
                </Button>
                <Button type="submit" loading={busy} data-testid="plan-save">
                  {t(editing ? 'common:form.save' : 'common:form.create')}
                </Button>
              </Group>
            </Group>
          )}
        </Stack>
      </form>
    </Modal>
  );
}
