/**
 * The account mails exist in every language the portal offers, translated, with every value the
 * English mail shows (name, user name, address, site, minutes) and the link on its own line.
 */
import { describe, expect, it } from 'vitest';
import { constants } from '../../../../src/generated/constants.ts';
import {
  MAIL_LANGUAGES,
  mailContent,
  mailLanguage,
  type MailKind,
  type MailVariables,
} from './mail-texts.ts';

const KINDS: MailKind[] = ['verifyEmail', 'resetPassword', 'register', 'accountExists'];
const variables: MailVariables = {
  name: 'Ada Quill',
  username: 'ada_quill',
  email: 'ada@mail.test',
  site: 'https://vdi.portal.test',
  link: 'https://vdi.portal.test/verify?token=t0k3n',
  minutes: 47,
};
const values = Object.entries(variables).filter(([key]) => key !== 'link');
const offered: readonly string[] = constants.profile.languages.value;

describe('account mail texts', () => {
  it('has mails in every offered language', () => {
    expect([...MAIL_LANGUAGES].sort()).toEqual([...offered].sort());
    for (const lang of offered) expect(mailLanguage(lang)).toBe(lang);
  });

  it('reads regional tags and any Chinese, and falls back to English', () => {
    expect(mailLanguage('pl-PL')).toBe('pl');
    expect(mailLanguage('ru_RU')).toBe('ru');
    expect(mailLanguage('zh-Hans')).toBe('zh_Hans');
    expect(mailLanguage('zh-CN')).toBe('zh_Hans');
    expect(mailLanguage('xx')).toBe('en');
    expect(mailLanguage(null)).toBe('en');
  });

  describe.each(KINDS)('%s', (kind) => {
    const english = mailContent(kind, 'en', variables);
    const shown = values.filter(([, value]) => english.text.includes(String(value)));

    it.each(offered.filter((lang) => lang !== 'en'))('in %s', (lang) => {
      const mail = mailContent(kind, lang, variables);
      expect(mail.subject).not.toBe(english.subject);
      expect(mail.text).not.toBe(english.text);
      const lost = shown.filter(([, value]) => !mail.text.includes(String(value)));
      expect(lost.map(([key]) => key)).toEqual([]);
      expect(mail.text.split('\n').filter((line) => line === variables.link)).toHaveLength(1);
      expect(mail.html.match(/<a /g)).toHaveLength(1);
      expect(mail.links).toEqual([variables.link]);
    });
  });
});
