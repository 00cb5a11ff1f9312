/** The account mails in English. */
import type { MailTexts } from './types.ts';

export const en: MailTexts = {
  verifyEmail: (v) => ({
    subject: 'Confirm your email address',
    before: [
      `Hello ${v.name},`,
      `Confirm that ${v.email} is the address of your account ${v.username} on ${v.site} by opening this link within ${v.minutes} minutes:`,
    ],
    action: 'Confirm my address',
    after: ['If you did not ask for this, ignore this mail.'],
  }),
  resetPassword: (v) => ({
    subject: 'Reset your password',
    before: [
      `Hello ${v.name},`,
      `Someone asked to reset the password of the account ${v.username} on ${v.site}. Open this link within ${v.minutes} minutes to choose a new password:`,
    ],
    action: 'Choose a new password',
    after: [
      'The link works once. If you did not ask for this, ignore this mail: your password stays as it is.',
    ],
  }),
  register: (v) => ({
    subject: 'Finish creating your account',
    before: [
      `Hello ${v.name},`,
      `To create the account ${v.username} on ${v.site}, open this link within ${v.minutes} minutes and enter the registration code you were given:`,
    ],
    action: 'Create my account',
    after: ['If you did not ask for this, ignore this mail.'],
  }),
  accountExists: (v) => ({
    subject: 'About your sign-up request',
    before: [
      'Hello,',
      `Someone asked to create the account ${v.username} with this address on ${v.site}, but that user name or this address is already registered, so no account was created.`,
      'If the account is yours and you forgot its password, you can reset it here:',
    ],
    action: 'Reset my password',
    after: ['Otherwise choose another user name, or ignore this mail.'],
  }),
};
