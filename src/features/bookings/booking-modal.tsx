/**
 * The booking modal, in its three kinds: view (the booking, with Edit and Delete when its state
 * offers them), create (from a selected slot or the New booking button) and edit. Before it
 * sends, the form checks the rules the schema declares for its body (advance notice, length,
 * count, overlap, end after start); a refused call shows its code on the field its rule names,
 * else in the form's alert. Dates are picked in local time on the field's step and sent in UTC.
 */
import '@mantine/core/styles/Modal.css';
import '@mantine/core/styles/ModalBase.css';
import '@mantine/core/styles/Overlay.css';
import { useState, type FormEvent } from 'react';
import { Alert, Anchor, Button, Group, Modal, Stack, Text, TextInput } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { InlineDeleteConfirm } from '@/components/inline-delete-confirm';
import { Link } from 'react-router';
import { fields } from '@/generated/fields';
import type { Booking, BookingItemType, BookingPriority } from '@/generated/types';
import { DateTimeStepInput } from '@/components/calendar/date-time-step-input';
import { formatDate, parseWireDate, toWireDate } from '@/lib/dates';
import { errorMessageKey, showError, type DisplayableError } from '@/lib/error-display';
import { useSessionState } from '@/lib/session-state';
import type { OtherEvent } from '@/lib/time-rules';
import { request } from '@/providers/http-client';
import { resourceKeyPrefix } from '@/providers/live-provider';
import { availableActions, usableOperation } from '@/resources/actions/available-actions';
import {
  STEP_MINUTES,
  bookingCodeParams,
  bookingFailures,
  bookingFieldOfCode,
  type BookingFormType,
} from './booking-rules';

export type BookingModalState =
  | { mode: 'view'; booking: Booking }
  | { mode: 'edit'; booking: Booking }
  | { mode: 'create'; start: Date; end: Date };

export interface BookingItem {
  type: BookingItemType;
  id: string;
}

export interface BookingModalProps {
  state: BookingModalState;
  /** The item new bookings are made for (the item calendar). */
  item: BookingItem | null;
  priority: BookingPriority | null | undefined;
  /** The item's events and windows a booking must not overlap. */
  others: readonly OtherEvent[];
  /** How many future bookings of the item the caller has at `now`. */
  upcoming: (now: number) => number;
  /** The latest end the plan allows (null: not known). */
  maxEnd: Date | null;
  /** The calendar of a booking's item (the summary links to it). */
  itemHref?: ((booking: Booking) => string | null) | undefined;
  onClose: () => void;
  onEdit: (booking: Booking) => void;
}

type Field = 'title' | 'start' | 'end';

const TITLE_MAX = fields.BookingCreate.find((meta) => meta.path === 'title')?.maxLength;
const START_STEP = fields.BookingCreate.find((meta) => meta.path === 'start')?.step ?? STEP_MINUTES;

function BookingView({
  booking,
  itemHref,
  onEdit,
  onClose,
}: {
  booking: Booking;
  itemHref?: ((booking: Booking) => string | null) | undefined;
  onEdit: (booking: Booking) => void;
  onClose: () => void;
}) {
  const { t } = useTranslation();
  const queryClient = useQueryClient();
  const role = useSessionState().user?.role_id ?? null;
  const offered = availableActions('bookings', { ...booking }, role).map((action) => action.name);
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const href = itemHref?.(booking) ?? null;
  const remove = async (): Promise<void> => {
    if (!booking.id) return;
    setBusy(true);
    try {
      await request('bookings.delete', { params: { id: booking.id } });
      await queryClient.invalidateQueries({ queryKey: resourceKeyPrefix('bookings') });
      notifications.show({ color: 'green', message: t('common:bookings.deleted') });
      onClose();
    } catch (error) {
      showError(error);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Stack gap="sm" data-testid="booking-view">
      <Text fw={600}>{booking.title?.trim() || t('common:bookings.untitled')}</Text>
      <Text size="sm">
        {t('common:bookings.span', {
          start: formatDate(booking.start),
          end: formatDate(booking.end),
        })}
      </Text>
      {booking.item_type && (
        <Text size="sm" c="dimmed">
          {t(`resources:bookings.enum.item_type.${booking.item_type}`)}
        </Text>
      )}
      {href && (
        <Anchor component={Link} to={href} size="sm" data-testid="booking-item-link">
          {t('common:bookings.openItem')}
        </Anchor>
      )}
      {confirming ? (
        <InlineDeleteConfirm
          title={t('common:bookings.deleteTitle')}
          question={t('common:bookings.deleteConfirm')}
          confirmLabel={t('resources:bookings.stateActions.delete')}
          busy={busy}
          onCancel={() => setConfirming(false)}
          onConfirm={() => void remove()}
          testId="booking-delete-confirm"
        />
      ) : (
        <Group gap="xs" justify="flex-end">
          {offered.includes('delete') && (
            <Button
              color="red"
              variant="light"
              onClick={() => setConfirming(true)}
              data-testid="booking-delete"
            >
              {t('resources:bookings.stateActions.delete')}
            </Button>
          )}
          {offered.includes('edit') && (
            <Button variant="default" onClick={() => onEdit(booking)} data-testid="booking-edit">
              {t('resources:bookings.stateActions.edit')}
            </Button>
          )}
          <Button onClick={onClose}>{t('common:actions.close')}</Button>
        </Group>
      )}
    </Stack>
  );
}

function BookingForm({
  state,
  item,
  priority,
  others,
  upcoming,
  maxEnd,
  onClose,
}: Omit<BookingModalProps, 'state' | 'itemHref' | 'onEdit'> & {
  state: Exclude<BookingModalState, { mode: 'view' }>;
}) {
  const { t } = useTranslation();
  const queryClient = useQueryClient();
  const editing = state.mode === 'edit' ? state.booking : null;
  const form: BookingFormType = editing ? 'BookingUpdate' : 'BookingCreate';
  const [title, setTitle] = useState(editing?.title ?? '');
  const [start, setStart] = useState<Date | null>(
    editing ? parseWireDate(editing.start) : state.mode === 'create' ? state.start : null,
  );
  const [end, setEnd] = useState<Date | null>(
    editing ? parseWireDate(editing.end) : state.mode === 'create' ? state.end : null,
  );
  const [errors, setErrors] = useState<Partial<Record<Field, string>>>({});
  const [alert, setAlert] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const target: BookingItem | null =
    editing?.item_id && editing.item_type ? { type: editing.item_type, id: editing.item_id } : item;

  const label = (field: Field): string => t(`resources:bookings.fields.${field}`);
  const message = (code: string, params: Record<string, unknown>): string =>
    t(errorMessageKey({ description_code: code }).key, params);

  const check = (): boolean => {
    const next: Partial<Record<Field, string>> = {};
    if (!start) next.start = t('errors:validation.required', { property: label('start') });
    if (!end) next.end = t('errors:validation.required', { property: label('end') });
    let formAlert: string | null = null;
    if (start && end) {
      const now = Date.now();
      const failures = bookingFailures(
        form,
        { start, end },
        {
          now,
          priority,
          others,
          ignoreId: editing?.id,
          count: upcoming(now),
          // The advance notice applies to an edit only when it moves the start.
          ...(editing && parseWireDate(editing.start)?.valueOf() === start.valueOf()
            ? { skip: ['updateAdvanceNotice'] }
            : {}),
        },
      );
      for (const failure of failures) {
        const text = message(failure.code, failure.params);
        if (failure.field === 'start' || failure.field === 'end') next[failure.field] ??= text;
        else formAlert ??= text;
      }
    }
    setErrors(next);
    setAlert(formAlert);
    return Object.keys(next).length === 0 && formAlert === null;
  };

  const submit = async (event: FormEvent): Promise<void> => {
    event.preventDefault();
    if (!target || !check() || !start || !end) return;
    setBusy(true);
    try {
      const span = { start: toWireDate(start), end: toWireDate(end) };
      const text = title.trim();
      if (editing?.id)
        await request('bookings.update', {
          params: { id: editing.id },
          body: {
            element_id: target.id,
            element_type: target.type,
            event_id: editing.id,
            ...(text ? { title: text } : {}),
            ...span,
          },
        });
      else
        await request('bookings.create', {
          body: {
            element_id: target.id,
            element_type: target.type,
            ...(text ? { title: text } : {}),
            ...span,
          },
        });
      await queryClient.invalidateQueries({ queryKey: resourceKeyPrefix('bookings') });
      notifications.show({
        color: 'green',
        message: t(editing ? 'common:bookings.updated' : 'common:bookings.created'),
      });
      onClose();
    } catch (error) {
      const err = (error ?? {}) as DisplayableError;
      const code = err.description_code ?? err.error ?? null;
      const field = bookingFieldOfCode(form, code);
      const text = t(errorMessageKey(err).key, {
        ...bookingCodeParams(form, code, priority),
        ...(err.params ?? {}),
      });
      if (field === 'start' || field === 'end') setErrors({ [field]: text });
      else if (err.statusCode === 401 || err.statusCode === 500 || err.statusCode === 503)
        showError(error);
      else setAlert(text);
    } finally {
      setBusy(false);
    }
  };

  const limits = [
    priority?.forbid_time
      ? t('common:bookings.limits.notice', { minutes: priority.forbid_time })
      : null,
    typeof priority?.max_time === 'number'
      ? t('common:bookings.limits.length', { minutes: priority.max_time })
      : null,
    typeof priority?.max_items === 'number'
      ? t('common:bookings.limits.items', { count: priority.max_items })
      : null,
    maxEnd
      ? t('common:bookings.limits.until', { date: formatDate(maxEnd.valueOf() / 1000) })
      : null,
  ].filter((line): line is string => line !== null);

  return (
    <form onSubmit={(event) => void submit(event)} noValidate data-testid="booking-form">
      <Stack gap="sm">
        {limits.length > 0 && (
          <Text size="xs" c="dimmed" data-testid="booking-limits">
            {limits.join(' · ')}
          </Text>
        )}
        <TextInput
          label={label('title')}
          value={title}
          onChange={(event) => setTitle(event.currentTarget.value)}
          {...(TITLE_MAX ? { maxLength: TITLE_MAX } : {})}
          error={errors.title}
          data-testid="booking-title"
        />
        <DateTimeStepInput
          label={label('start')}
          value={start}
          onChange={setStart}
          step={START_STEP}
          error={errors.start}
          minDate={new Date()}
          maxDate={maxEnd ?? undefined}
          required
          testId="booking-start"
        />
        <DateTimeStepInput
          label={label('end')}
          value={end}
          onChange={setEnd}
          step={START_STEP}
          error={errors.end}
          minDate={start ?? new Date()}
          maxDate={maxEnd ?? undefined}
          required
          testId="booking-end"
        />
        {alert && (
          <Alert color="red" role="alert" data-testid="booking-alert">
            {alert}
          </Alert>
        )}
        <Group justify="flex-end" gap="xs">
          <Button variant="default" onClick={onClose} disabled={busy}>
            {t('common:actions.cancel')}
          </Button>
          <Button type="submit" loading={busy} disabled={!target} data-testid="booking-save">
            {t(editing ? 'common:form.save' : 'common:bookings.book')}
          </Button>
        </Group>
      </Stack>
    </form>
  );
}

/** True when the role may create bookings now (the operation is built and allowed). */
export function canCreateBooking(role: Parameters<typeof usableOperation>[2]): boolean {
  return usableOperation('bookings', 'create', role) !== null;
}

export function BookingModal(props: BookingModalProps) {
  const { t } = useTranslation();
  const { state, onClose } = props;
  const title =
    state.mode === 'view'
      ? t('common:bookings.modal.view')
      : state.mode === 'edit'
        ? t('common:bookings.modal.edit')
        : t('common:bookings.modal.create');
  return (
    <Modal
      opened
      onClose={onClose}
      title={title}
      closeButtonProps={{ 'aria-label': t('common:actions.close') }}
      data-testid="booking-modal"
      data-mode={state.mode}
    >
      {state.mode === 'view' ? (
        <BookingView
          booking={state.booking}
          itemHref={props.itemHref}
          onEdit={props.onEdit}
          onClose={onClose}
        />
      ) : (
        <BookingForm
          key={state.mode === 'edit' ? (state.booking.id ?? 'edit') : 'create'}
          state={state}
          item={props.item}
          priority={props.priority}
          others={props.others}
          upcoming={props.upcoming}
          maxEnd={props.maxEnd}
          onClose={onClose}
        />
      )}
    </Modal>
  );
}
