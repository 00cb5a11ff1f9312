/**
 * The interface language kept on the server: the profile's `language` action switches the
 * interface once the server saved the choice, and the header's switcher saves what the user picks
 * while logged in (the server uses it for notifications and the disclaimer).
 */
import { operations } from '@/generated/api';
import { changeLanguage } from '@/i18n/i18n';
import { matchLanguage } from '@/i18n/languages';
import { getSessionState } from '@/lib/session-state';
import { request } from '@/providers/http-client';
import type { ActionEffect } from '@/resources/actions/action-effects';

/** Action effect `switchLanguage`: the interface follows the language the action saved. */
export const switchLanguage: ActionEffect = async ({ values }) => {
  const language = matchLanguage(typeof values.lang === 'string' ? values.lang : null);
  if (language) await changeLanguage(language);
};

/**
 * Saves the user's language on the server when someone is logged in and the installation has the
 * call; a failure only logs (the interface has already switched).
 */
export async function saveLanguage(lang: string): Promise<void> {
  if (!getSessionState().user || operations['profile.language'].planned) return;
  const language = matchLanguage(lang);
  if (!language) return;
  try {
    await request('profile.language', { params: { lang: language } });
  } catch (error) {
    console.warn('language not saved', error);
  }
}
