/**
 * A list the user returns to after creating one of its records: once the new record is among the
 * shown records, the table or grid scrolls to it (`revealId`), the focus goes to its row or card,
 * and a polite announcement names it, so a keyboard or screen-reader user carries on from what
 * they made.
 */
import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { createdAmong, forgetCreated } from '../actions/created-record';
import { focusRecordWhenShown } from '../actions/focus-after-action';
import { recordTitle } from '../actions/record-operation';
import type { ListRecord } from './list-filter';

export interface CreatedFocus {
  /** The id of the new record to scroll to, or null. */
  revealId: string | null;
  /** The text of the polite live region ('' until the new record has the focus). */
  announcement: string;
}

export function useCreatedFocus(resource: string, records: readonly ListRecord[]): CreatedFocus {
  const { t } = useTranslation();
  const [found, setFound] = useState<{ id: string; name: string } | null>(null);
  const [announcement, setAnnouncement] = useState('');
  // Found during render, once: the list's records are what the user sees now.
  const id = found
    ? null
    : createdAmong(resource, records, (record) => recordTitle(resource, record));
  if (id !== null) {
    const record = records.find((item) => String(item.id) === id);
    setFound({ id, name: record ? recordTitle(resource, record) : id });
  }

  useEffect(() => {
    if (found) forgetCreated();
  }, [found]);

  useEffect(() => {
    if (!found) return;
    return focusRecordWhenShown(found.id, () =>
      setAnnouncement(t('common:list.createdFocused', { name: found.name })),
    );
  }, [found, t]);

  return { revealId: found?.id ?? null, announcement };
}
