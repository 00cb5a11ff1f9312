/**
 * The portal's texts and switches as admins edit them: maintenance and its page text, the
 * disclaimer (one language at a time), the notification of each trigger, and which account
 * policies require a second factor. Each write reads the
 * stored value, writes the new one and its audit entry in one transaction, then drops the
 * settings cache so the change applies at once. Disclaimer and notification bodies keep only the
 * allowed HTML when saved (and again when shown: older values may predate the rule).
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { queryOn } from '../../platform/db/query.ts';
import { sanitizeHtml } from '../../platform/lib/html-sanitizer.ts';
import {
  defaultSettings,
  type LocalizedTexts,
  type NotificationSetting,
  type Settings,
} from '../../platform/repository/settings-repository.ts';
import type {
  AdminSettings,
  AdminSettingsDisclaimerUpdate,
  AdminSettingsMaintenanceUpdate,
  AdminSettingsNotificationParams,
  AdminSettingsNotificationUpdate,
  AdminSettingsSecondFactorUpdate,
} from '../../../../src/generated/types.ts';
import { policyFor } from '../../platform/auth/password-policy.ts';
import { appendAudit } from './audit.ts';
import type { Role } from '../../../../src/generated/types.ts';

export type NotificationTrigger = AdminSettingsNotificationParams['trigger'];
type NotificationView = AdminSettings['login_notification'];

/** Who writes: the audit entry names them. */
export interface SettingsActor {
  userId: string;
  name: string;
  role: Role;
}

/** The language a new notification's text is written in. */
const NEW_TEXT_LANGUAGE = 'en';

/** The first notification of a trigger, where a notification is edited. */
function notificationIndex(list: readonly NotificationSetting[], trigger: string): number {
  return list.findIndex((n) => n.trigger === trigger);
}

function notificationView(list: readonly NotificationSetting[], trigger: string): NotificationView {
  const setting = list[notificationIndex(list, trigger)];
  if (!setting)
    return {
      enabled: false,
      display: ['modal'],
      title: '',
      body: '',
      force_accept: false,
      once: false,
      roles: [],
    };
  const text = setting.text.lang[setting.text.default] ?? Object.values(setting.text.lang)[0];
  return {
    enabled: setting.enabled,
    display: setting.display,
    title: text?.title ?? '',
    body: text?.body ? sanitizeHtml(text.body) : '',
    force_accept: setting.force_accept,
    once: setting.once,
    roles: setting.roles as NotificationView['roles'],
  };
}

export function settingsView(settings: Settings): AdminSettings {
  const texts = settings.disclaimer_text;
  const disclaimer = texts.lang[texts.default];
  return {
    id: 'settings',
    maintenance: settings.maintenance,
    maintenance_text: { ...settings.maintenance_text },
    disclaimer: {
      lang: texts.default,
      title: disclaimer?.title ?? '',
      body: disclaimer?.body ? sanitizeHtml(disclaimer.body) : '',
      footer: disclaimer?.footer ? sanitizeHtml(disclaimer.footer) : '',
      languages: Object.keys(texts.lang),
    },
    login_notification: notificationView(settings.notifications, 'login'),
    start_desktop_notification: notificationView(settings.notifications, 'start_desktop'),
    second_factor: settings.account_policies
      .filter((p) => p.second_factor)
      .map((p) => ({ category: p.category, role: p.role })),
  };
}

export function createSettingsService(app: FastifyInstance) {
  /**
   * Reads `keys` (stored, else their defaults) with their rows locked, writes what `change`
   * makes of them and the audit entry, all in one transaction; then drops the cache.
   */
  async function write<K extends keyof Settings>(
    actor: SettingsActor,
    op: string,
    target: string,
    keys: readonly K[],
    change: (before: Pick<Settings, K>) => Pick<Settings, K>,
  ): Promise<void> {
    await app.db.transaction(async (tx) => {
      const query = queryOn(tx);
      const stored = new Map<string, unknown>();
      for (const key of keys) {
        const [row] = await query<{ value: unknown }>(
          'SELECT value FROM settings WHERE key = $1 FOR UPDATE',
          [key],
        );
        if (row) stored.set(key, row.value);
      }
      const before = Object.fromEntries(
        keys.map((key) => [key, stored.get(key) ?? structuredClone(defaultSettings[key])]),
      ) as Pick<Settings, K>;
      const after = change(structuredClone(before));
      for (const key of keys)
        await query(
          `INSERT INTO settings (key, value, updated_at) VALUES ($1, $2::jsonb, now())
           ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()`,
          [key, JSON.stringify(after[key])],
        );
      await appendAudit(
        tx,
        { id: actor.userId, name: actor.name, role: actor.role, categoryId: '' },
        {
          action: `adminSettings.${op}`,
          targetType: 'settings',
          targetId: target,
          targetName: target,
          categoryId: null,
          before,
          after,
        },
      );
    });
    app.settings.invalidate();
  }

  return {
    /**
     * Sets `second_factor` on the policy of exactly (category, role, every provider); a scope
     * without its own policy gets a copy of the one that applied to it (else the default rules).
     */
    async setSecondFactor(
      actor: SettingsActor,
      body: AdminSettingsSecondFactorUpdate,
    ): Promise<void> {
      const target = `account_policies.${body.category}.${body.role}`;
      await write(actor, 'setSecondFactor', target, ['account_policies'], (before) => {
        const list = before.account_policies;
        const own = (p: (typeof list)[number]) =>
          p.category === body.category && p.role === body.role && p.provider === 'all';
        if (list.some(own))
          return {
            account_policies: list.map((p) =>
              own(p) ? { ...p, second_factor: body.required } : p,
            ),
          };
        const base =
          policyFor(list, { categoryId: body.category, role: body.role, provider: 'all' }) ??
          defaultSettings.account_policies[0];
        if (!base) return { account_policies: list };
        const added = {
          ...base,
          category: body.category,
          role: body.role,
          provider: 'all',
          second_factor: body.required,
        };
        return { account_policies: [...list, added] };
      });
    },

    async show(): Promise<AdminSettings> {
      return settingsView(await app.settings.all());
    },

    async setMaintenance(
      actor: SettingsActor,
      body: AdminSettingsMaintenanceUpdate,
    ): Promise<void> {
      await write(
        actor,
        'setMaintenance',
        'maintenance',
        ['maintenance', 'maintenance_text'],
        () => ({
          maintenance: body.maintenance,
          maintenance_text: { title: body.title, body: body.body, enabled: body.enabled },
        }),
      );
    },

    async setDisclaimer(actor: SettingsActor, body: AdminSettingsDisclaimerUpdate): Promise<void> {
      await write(actor, 'setDisclaimer', 'disclaimer_text', ['disclaimer_text'], (before) => {
        const texts: LocalizedTexts = before.disclaimer_text;
        texts.lang[body.lang] = {
          title: body.title,
          body: sanitizeHtml(body.body),
          footer: sanitizeHtml(body.footer),
        };
        return { disclaimer_text: texts };
      });
    },

    async setNotification(
      actor: SettingsActor,
      trigger: NotificationTrigger,
      body: AdminSettingsNotificationUpdate,
    ): Promise<void> {
      await write(
        actor,
        'setNotification',
        `notifications.${trigger}`,
        ['notifications'],
        (before) => {
          const list = before.notifications;
          const index = notificationIndex(list, trigger);
          const current = list[index];
          const lang = current?.text.default ?? NEW_TEXT_LANGUAGE;
          const next: NotificationSetting = {
            id: current?.id ?? randomUUID(),
            enabled: body.enabled,
            trigger,
            display: [...body.display],
            once: body.once,
            force_accept: body.force_accept,
            ignore_after: current?.ignore_after ?? null,
            roles: [...body.roles],
            text: {
              default: lang,
              lang: {
                ...current?.text.lang,
                [lang]: {
                  title: body.title,
                  body: sanitizeHtml(body.body),
                  footer: current?.text.lang[lang]?.footer ?? '',
                },
              },
            },
          };
          return {
            notifications:
              index === -1 ? [...list, next] : list.map((n, i) => (i === index ? next : n)),
          };
        },
      );
    },
  };
}

export type SettingsService = ReturnType<typeof createSettingsService>;
