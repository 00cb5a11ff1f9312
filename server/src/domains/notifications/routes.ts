/**
 * Notifications for the caller on a trigger (login, start_desktop) in a display (modal,
 * fullpage), and the message templates. A notification is shown while it is enabled, is for the
 * trigger and display, is for the caller's role (no roles = every role) and its ignore_after has
 * not passed; one marked `once` is shown to a user a single time, even to parallel requests.
 * Texts come in the caller's language, else in the text's default one (a notification with
 * neither is left out); bodies and footers only keep the allowed HTML.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../platform/http/api-error.ts';
import { sanitizeHtml } from '../../platform/lib/html-sanitizer.ts';
import { route } from '../../platform/http/route.ts';
import { authOf } from '../../platform/auth/auth.ts';
import type {
  LocalizedTexts,
  NotificationSetting,
} from '../../platform/repository/settings-repository.ts';
import type { NotificationGroup, NotificationTemplate } from '../../../../src/generated/types.ts';

/** The kind of item every configured notification is: a text the administrator wrote. */
const ITEM_TYPE = 'custom';

/** The message template name of the disclaimer. */
const DISCLAIMER_TEMPLATE = 'disclaimer-acknowledgement';

/** The text in `lang`, else in the default language; null when neither exists. */
function localized(texts: LocalizedTexts, lang: string | null): NotificationTemplate | null {
  const text = (lang !== null ? texts.lang[lang] : undefined) ?? texts.lang[texts.default];
  if (!text) return null;
  return {
    title: text.title,
    body: text.body ? sanitizeHtml(text.body) : '',
    footer: text.footer ? sanitizeHtml(text.footer) : '',
  };
}

export default async function notificationRoutes(app: FastifyInstance) {
  const { query } = app.database;

  /** Of the `once` notifications, those this call records as seen now (none seen before). */
  const claimOnce = async (userId: string, ids: readonly string[]): Promise<Set<string>> => {
    const claimed = new Set<string>();
    for (const id of ids) {
      const rows = await query<{ notification_id: string }>(
        `INSERT INTO notification_seen (id, user_id, notification_id) VALUES ($1, $2, $3)
         ON CONFLICT (user_id, notification_id) DO NOTHING RETURNING notification_id`,
        [randomUUID(), userId, id],
      );
      if (rows.length > 0) claimed.add(id);
    }
    return claimed;
  };

  route(app, 'notifications.user', async (request) => {
    const auth = authOf(request);
    const { trigger, display } = request.params;
    const [settings, user] = await Promise.all([app.settings.all(), app.users.byId(auth.userId)]);
    const lang = user?.lang ?? null;
    const now = Date.now() / 1000;
    const matching: { setting: NotificationSetting; order: number; text: NotificationTemplate }[] =
      [];
    settings.notifications.forEach((setting, index) => {
      if (
        !setting.enabled ||
        setting.trigger !== trigger ||
        !setting.display.includes(display) ||
        (setting.roles.length > 0 && !setting.roles.includes(auth.role)) ||
        (setting.ignore_after !== null && setting.ignore_after <= now)
      )
        return;
      const text = localized(setting.text, lang);
      if (text) matching.push({ setting, order: index + 1, text });
    });
    const claimed = await claimOnce(
      auth.userId,
      matching.filter((m) => m.setting.once).map((m) => m.setting.id),
    );
    const notifications: Record<string, Record<string, NotificationGroup>> = {};
    for (const { setting, order, text } of matching) {
      if (setting.once && !claimed.has(setting.id)) continue;
      notifications[String(order)] = {
        [ITEM_TYPE]: {
          display: setting.display,
          action_id: setting.id,
          template_id: null,
          force_accept: setting.force_accept,
          template: text,
          notifications: [{ id: setting.id, ...text }],
        },
      };
    }
    return { notifications };
  });

  route(app, 'notifications.messageTemplate', async (request) => {
    const auth = authOf(request);
    const { name } = request.params;
    if (name !== DISCLAIMER_TEMPLATE)
      throw new ApiError('not_found', `No message template ${name}`, 'not_found', { name });
    const [settings, user] = await Promise.all([app.settings.all(), app.users.byId(auth.userId)]);
    const text = localized(settings.disclaimer_text, user?.lang ?? null);
    if (!text)
      throw new ApiError('not_found', `No text for the message template ${name}`, 'not_found', {
        name,
      });
    return { messageTemplate: text };
  });
}
