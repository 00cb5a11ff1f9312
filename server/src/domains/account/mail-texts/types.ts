/** The shape every language's account mails share. */

export type MailKind = 'verifyEmail' | 'resetPassword' | 'register' | 'accountExists';

export interface MailVariables {
  /** the person's name (or the username) */
  name: string;
  username: string;
  email: string;
  /** the portal's address */
  site: string;
  link: string;
  /** how long the link works */
  minutes: number;
}

export interface MailTemplate {
  subject: string;
  /** paragraphs before the link */
  before: string[];
  /** the link's label in the HTML */
  action: string;
  /** paragraphs after the link */
  after: string[];
}

/** Every mail of one language. */
export type MailTexts = Record<MailKind, (v: MailVariables) => MailTemplate>;
