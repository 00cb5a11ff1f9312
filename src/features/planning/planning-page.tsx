/**
 * The planning screen (`/planning`, admin): pick a reservable item (a GPU card) and, to narrow
 * the view, one of its profiles; the calendar shows the card's plans (a profile available with N
 * units between two times) by week or month. Selecting a slot (or New plan) makes a plan,
 * clicking one edits or deletes it. Plans stay live through the plan socket events.
 */
import '@mantine/core/styles/Skeleton.css';
import { useMemo, useState } from 'react';
import { Alert, Button, Group, Select, Skeleton, Stack, Text, Title } from '@mantine/core';
import { IconPlus } from '@tabler/icons-react';
import { useQuery } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { constants } from '@/generated/constants';
import type { PlannerEvent } from '@/generated/types';
import { visibleRange, type CalendarView } from '@/components/calendar/calendar-localizer';
import { PortalCalendar, type CalendarEvent } from '@/components/calendar/portal-calendar';
import { ceilToStep, formatDate, parseWireDate } from '@/lib/dates';
import { translateError } from '@/lib/error-display';
import { useSessionState } from '@/lib/session-state';
import type { OtherEvent } from '@/lib/time-rules';
import { usableOperation } from '@/resources/actions/available-actions';
import { PlanModal, type PlanModalState } from './plan-modal';
import { planningQueries, type ItemType } from './queries';

const VIEWS: readonly CalendarView[] = ['week', 'month'];
/** Slot length of the calendar and of a new plan's default span. */
const STEP_MINUTES = constants.bookings.timeStepMinutes.value;

export function PlanningPage() {
  const { t } = useTranslation();
  const role = useSessionState().user?.role_id ?? null;
  const canCreate = usableOperation('planning', 'create', role) !== null;
  const canUpdate = usableOperation('planning', 'update', role) !== null;
  const [chosenType, setChosenType] = useState<ItemType | null>(null);
  const [chosenItem, setChosenItem] = useState<string | null>(null);
  const [profile, setProfile] = useState<string | null>(null);
  const [view, setView] = useState<CalendarView>('week');
  const [date, setDate] = useState(() => new Date());
  const [modal, setModal] = useState<PlanModalState | null>(null);
  const range = useMemo(() => visibleRange(view, date), [view, date]);

  const types = useQuery(planningQueries.types());
  // A single choice starts chosen.
  const itemType = chosenType ?? types.data?.[0] ?? null;
  const items = useQuery({
    ...planningQueries.items(itemType ?? 'gpus'),
    enabled: itemType !== null,
  });
  const itemId = chosenItem ?? items.data?.[0]?.id ?? null;
  const profiles = useQuery({
    ...planningQueries.profiles(itemType ?? 'gpus', itemId ?? ''),
    enabled: itemType !== null && itemId !== null,
  });
  const plans = useQuery({
    ...planningQueries.plans(itemId ?? '', range),
    enabled: itemId !== null,
  });

  const names = useMemo(
    () => new Map((profiles.data ?? []).map((subitem) => [subitem.id, subitem.name])),
    [profiles.data],
  );
  const { events, others } = useMemo(() => {
    const drawn: CalendarEvent<PlannerEvent>[] = [];
    const all: OtherEvent[] = [];
    for (const plan of plans.data?.data ?? []) {
      // A socket event of another card lands in every cached list: keep this card's.
      if (plan.item_id !== undefined && plan.item_id !== itemId) continue;
      const start = parseWireDate(plan.start);
      const end = parseWireDate(plan.end);
      if (!start || !end) continue;
      all.push({ id: plan.id, start, end });
      if (profile && plan.subitem_id !== profile) continue;
      const name = names.get(plan.subitem_id) ?? plan.subitem_id;
      const title =
        typeof plan.units === 'number'
          ? t('common:planning.planTitle', { name, count: plan.units })
          : name;
      drawn.push({
        key: plan.id,
        title,
        label: t('common:bookings.eventLabel', {
          title,
          start: formatDate(plan.start),
          end: formatDate(plan.end),
        }),
        start,
        end,
        kind: 'plan',
        record: plan,
      });
    }
    return { events: drawn, others: all };
  }, [plans.data, itemId, profile, names, t]);

  const create = (start: Date, end: Date): void =>
    setModal({ mode: 'create', start, end, subitemId: profile });
  const newPlan = (): void => {
    const start = ceilToStep(Date.now(), STEP_MINUTES);
    create(start, new Date(start.valueOf() + STEP_MINUTES * 60_000));
  };

  const error = types.error ?? items.error ?? profiles.error ?? plans.error;
  const loadingChoices = types.isLoading || items.isLoading;
  const noItems = !loadingChoices && !error && (items.data ?? []).length === 0;

  return (
    <Stack gap="md" data-testid="planning">
      <Title order={1} size="h3">
        {t('resources:planning.title')}
      </Title>
      <Group gap="sm" align="flex-end" wrap="wrap">
        {(types.data ?? []).length > 1 && (
          <Select
            label={t('resources:planning.fields.item_type')}
            data={(types.data ?? []).map((type) => ({
              value: type,
              label: t(`resources:planning.enum.item_type.${type}`),
            }))}
            value={itemType}
            onChange={(value) => {
              setChosenType(types.data?.find((type) => type === value) ?? null);
              setChosenItem(null);
              setProfile(null);
            }}
            allowDeselect={false}
            data-testid="planning-type"
          />
        )}
        <Select
          label={t('common:planning.item')}
          placeholder={t('common:planning.itemPlaceholder')}
          data={(items.data ?? []).map((item) => ({ value: item.id, label: item.name }))}
          value={itemId}
          onChange={(value) => {
            setChosenItem(value);
            setProfile(null);
          }}
          disabled={loadingChoices}
          allowDeselect={false}
          searchable
          w={280}
          data-testid="planning-item"
        />
        <Select
          label={t('common:planning.profile')}
          placeholder={t('common:planning.allProfiles')}
          data={(profiles.data ?? []).map((subitem) => ({
            value: subitem.id,
            label: subitem.name,
          }))}
          value={profile}
          onChange={setProfile}
          clearable
          disabled={itemId === null}
          w={240}
          data-testid="planning-profile"
        />
      </Group>
      {error ? (
        <Alert color="red" role="alert" data-testid="planning-error">
          {translateError(error as never)}
        </Alert>
      ) : null}
      {noItems ? (
        <Text c="dimmed" data-testid="planning-no-items">
          {t('common:planning.noItems')}
        </Text>
      ) : loadingChoices || (plans.isLoading && !plans.data) ? (
        <Skeleton height={560} radius="md" aria-busy data-testid="calendar-skeleton" />
      ) : (
        <>
          {events.length === 0 && !plans.isFetching && (
            <Text size="sm" c="dimmed" data-testid="planning-empty">
              {t('resources:planning.empty')}
            </Text>
          )}
          <PortalCalendar<PlannerEvent>
            label={t('resources:planning.title')}
            events={events}
            view={view}
            views={VIEWS}
            onView={setView}
            date={date}
            onNavigate={setDate}
            step={STEP_MINUTES}
            selectable={canCreate && itemId !== null}
            onSelectSlot={(selection) => {
              if (!selection.allDay) return create(selection.start, selection.end);
              const earliest = ceilToStep(Date.now(), STEP_MINUTES);
              const start = selection.start < earliest ? earliest : selection.start;
              create(start, new Date(start.valueOf() + STEP_MINUTES * 60_000));
            }}
            onSelectEvent={(event) => {
              if (canUpdate) setModal({ mode: 'edit', plan: event.record });
            }}
            busy={plans.isFetching}
            toolbarExtra={
              canCreate && itemId !== null ? (
                <Button
                  size="xs"
                  leftSection={<IconPlus size={14} />}
                  onClick={newPlan}
                  data-testid="plan-new"
                >
                  {t('common:planning.new')}
                </Button>
              ) : null
            }
          />
        </>
      )}
      {modal && itemType && itemId && (
        <PlanModal
          state={modal}
          itemType={itemType}
          itemId={itemId}
          profiles={profiles.data ?? []}
          others={others}
          onClose={() => setModal(null)}
        />
      )}
    </Stack>
  );
}
