/**
 * What the server has to tell the user outside a screen: the status bar (GET
 * /notifications/status_bar) and the notifications of a trigger (after login, after a desktop
 * start) shown in a modal or full page, one after the other. Fetch failures are only logged: a
 * notification must never stand between the user and their desktops.
 */
import { useSyncExternalStore } from 'react';
import { operations } from '@/generated/api';
import type { NotificationUserParams, NotificationUserResponse } from '@/generated/types';
import { request } from '@/providers/http-client';

export type NotificationTrigger = NotificationUserParams['trigger'];
export type NotificationDisplay = NotificationUserParams['display'];

/** One notification as shown: its texts (or its template's) and whether it must be accepted. */
export interface ShownNotification {
  key: string;
  display: NotificationDisplay;
  title: string;
  /** Server-sanitised HTML. */
  body: string;
  /** Server-sanitised HTML. */
  footer: string;
  forceAccept: boolean;
}

export interface StatusBar {
  text: string;
  level: string;
}

interface State {
  statusBar: StatusBar | null;
  statusBarDismissed: boolean;
  queue: readonly ShownNotification[];
}

const EMPTY: State = { statusBar: null, statusBarDismissed: false, queue: [] };
let state: State = EMPTY;
const listeners = new Set<() => void>();

function update(patch: Partial<State>): void {
  state = { ...state, ...patch };
  for (const listener of listeners) listener();
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** React binding of the notifications state. */
export function useUserNotifications(): State {
  return useSyncExternalStore(
    subscribe,
    () => state,
    () => state,
  );
}

/** Forgets everything (logout). */
export function clearUserNotifications(): void {
  update(EMPTY);
}

/** Hides the status bar until the next session. */
export function dismissStatusBar(): void {
  update({ statusBarDismissed: true });
}

/** Removes the notification on screen; the next one in line shows. */
export function closeCurrentNotification(): void {
  update({ queue: state.queue.slice(1) });
}

/** Adds notifications to the line (a notification already in line is not added twice). */
export function queueNotifications(items: readonly ShownNotification[]): void {
  const known = new Set(state.queue.map((item) => item.key));
  const fresh = items.filter((item) => !known.has(item.key));
  if (fresh.length) update({ queue: [...state.queue, ...fresh] });
}

const text = (...candidates: (string | null | undefined)[]): string =>
  candidates.find((value): value is string => typeof value === 'string' && value !== '') ?? '';

/**
 * The notifications of an answer, flattened in the server's order (order -> item type -> group),
 * each falling back to its group's template for a missing title, body or footer.
 */
export function flattenNotifications(
  answer: NotificationUserResponse | null | undefined,
  display: NotificationDisplay,
): ShownNotification[] {
  const byOrder = Object.entries(answer?.notifications ?? {}).sort(
    ([a], [b]) => Number(a) - Number(b) || a.localeCompare(b),
  );
  const out: ShownNotification[] = [];
  for (const [order, groups] of byOrder)
    for (const [kind, group] of Object.entries(groups ?? {})) {
      if (!group) continue;
      for (const item of group.notifications ?? []) {
        const title = text(item.title, item.template?.title, group.template?.title);
        const body = text(item.body, item.text, item.template?.body, group.template?.body);
        const footer = text(item.footer, item.template?.footer, group.template?.footer);
        if (!title && !body && !footer) continue;
        out.push({
          key: `${order}:${kind}:${item.id}`,
          display,
          title,
          body,
          footer,
          forceAccept: item.force_accept ?? group.force_accept ?? false,
        });
      }
    }
  return out;
}

/**
 * Fetches and shows the notifications of a trigger for each display (login: modal and full
 * page; a desktop start: modal). Nothing happens while the call is not built.
 */
export async function showTriggeredNotifications(
  trigger: NotificationTrigger,
  displays: readonly NotificationDisplay[],
): Promise<void> {
  if (operations['notifications.user'].planned) return;
  for (const display of displays) {
    try {
      const answer = await request('notifications.user', { params: { trigger, display } });
      queueNotifications(flattenNotifications(answer, display));
    } catch (error) {
      console.warn(`notifications ${trigger}/${display}`, error);
    }
  }
}

/** Fetches the status bar (shown while it has a text). Failures are only logged. */
export async function loadStatusBar(): Promise<void> {
  if (operations['session.statusBar'].planned) return;
  try {
    const answer = await request('session.statusBar');
    const bar =
      answer && typeof answer.text === 'string' && answer.text
        ? { text: answer.text, level: answer.level ?? 'info' }
        : null;
    update({ statusBar: bar, statusBarDismissed: false });
  } catch (error) {
    console.warn('status bar', error);
  }
}
