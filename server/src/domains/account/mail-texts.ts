/**
 * The account mails in every portal language, chosen by the user's language (English otherwise).
 * Each language's texts live in mail-texts/<lang>.ts. Each mail is a plain-text version and a simple
 * HTML one with the same paragraphs; the link stands on its own line in the text and is the only
 * anchor in the HTML.
 */
import { ca } from './mail-texts/ca.ts';
import { de } from './mail-texts/de.ts';
import { en } from './mail-texts/en.ts';
import { eo } from './mail-texts/eo.ts';
import { es } from './mail-texts/es.ts';
import { eu } from './mail-texts/eu.ts';
import { fr } from './mail-texts/fr.ts';
import { hi } from './mail-texts/hi.ts';
import { ko } from './mail-texts/ko.ts';
import { pl } from './mail-texts/pl.ts';
import { ru } from './mail-texts/ru.ts';
import type { MailKind, MailTexts, MailVariables } from './mail-texts/types.ts';
import { zhHans } from './mail-texts/zh-hans.ts';
import { escapeHtml } from '../../../../common/html.ts';

export type { MailKind, MailVariables } from './mail-texts/types.ts';

export const MAIL_LANGUAGES = [
  'en',
  'es',
  'ca',
  'fr',
  'de',
  'eo',
  'eu',
  'hi',
  'ko',
  'pl',
  'ru',
  'zh_Hans',
] as const;
export type MailLanguage = (typeof MAIL_LANGUAGES)[number];

const TEXTS: Record<MailLanguage, MailTexts> = {
  en,
  es,
  ca,
  fr,
  de,
  eo,
  eu,
  hi,
  ko,
  pl,
  ru,
  zh_Hans: zhHans,
};

/**
 * The mail language for a user's `lang` (`es`, `es-ES`, `es_ES`...; any Chinese is `zh_Hans`, the
 * one Chinese the portal offers), English otherwise.
 */
export function mailLanguage(lang: string | null | undefined): MailLanguage {
  const base = (lang ?? '').toLowerCase().split(/[-_]/)[0] ?? '';
  if (base === 'zh') return 'zh_Hans';
  return (MAIL_LANGUAGES as readonly string[]).includes(base) ? (base as MailLanguage) : 'en';
}

export interface MailContent {
  subject: string;
  text: string;
  html: string;
  /** the links of the mail (the log delivery prints them on their own lines) */
  links: string[];
}

/** The mail of `kind` in the language of `lang`. */
export function mailContent(
  kind: MailKind,
  lang: string | null | undefined,
  variables: MailVariables,
): MailContent {
  const t = TEXTS[mailLanguage(lang)][kind](variables);
  const text = [...t.before, '', variables.link, '', ...t.after].join('\n');
  const paragraph = (p: string) => `<p>${escapeHtml(p)}</p>`;
  const html = [
    '<!doctype html><html><body style="font-family: sans-serif">',
    ...t.before.map(paragraph),
    `<p><a href="${escapeHtml(variables.link)}">${escapeHtml(t.action)}</a></p>`,
    `<p style="font-size: small; word-break: break-all">${escapeHtml(variables.link)}</p>`,
    ...t.after.map(paragraph),
    '</body></html>',
  ].join('\n');
  return { subject: t.subject, text, html, links: [variables.link] };
}
