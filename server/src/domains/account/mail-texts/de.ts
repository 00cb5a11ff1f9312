/** The account mails in German. */
import type { MailTexts } from './types.ts';

export const de: MailTexts = {
  verifyEmail: (v) => ({
    subject: 'Bestätigen Sie Ihre E-Mail-Adresse',
    before: [
      `Hallo ${v.name},`,
      `bestätigen Sie, dass ${v.email} die Adresse Ihres Kontos ${v.username} auf ${v.site} ist, indem Sie diesen Link innerhalb von ${v.minutes} Minuten öffnen:`,
    ],
    action: 'Meine Adresse bestätigen',
    after: ['Wenn Sie dies nicht angefordert haben, ignorieren Sie diese E-Mail.'],
  }),
  resetPassword: (v) => ({
    subject: 'Setzen Sie Ihr Passwort zurück',
    before: [
      `Hallo ${v.name},`,
      `jemand hat angefordert, das Passwort des Kontos ${v.username} auf ${v.site} zurückzusetzen. Öffnen Sie diesen Link innerhalb von ${v.minutes} Minuten, um ein neues Passwort zu wählen:`,
    ],
    action: 'Neues Passwort wählen',
    after: [
      'Der Link funktioniert nur einmal. Wenn Sie dies nicht angefordert haben, ignorieren Sie diese E-Mail: Ihr Passwort bleibt unverändert.',
    ],
  }),
  register: (v) => ({
    subject: 'Schließen Sie die Erstellung Ihres Kontos ab',
    before: [
      `Hallo ${v.name},`,
      `um das Konto ${v.username} auf ${v.site} zu erstellen, öffnen Sie diesen Link innerhalb von ${v.minutes} Minuten und geben Sie den Registrierungscode ein, den Sie erhalten haben:`,
    ],
    action: 'Mein Konto erstellen',
    after: ['Wenn Sie dies nicht angefordert haben, ignorieren Sie diese E-Mail.'],
  }),
  accountExists: (v) => ({
    subject: 'Zu Ihrer Registrierungsanfrage',
    before: [
      'Hallo,',
      `jemand hat angefordert, das Konto ${v.username} mit dieser Adresse auf ${v.site} zu erstellen, aber dieser Benutzername oder diese Adresse ist bereits registriert. Es wurde kein Konto erstellt.`,
      'Wenn das Konto Ihnen gehört und Sie das Passwort vergessen haben, können Sie es hier zurücksetzen:',
    ],
    action: 'Mein Passwort zurücksetzen',
    after: ['Andernfalls wählen Sie einen anderen Benutzernamen oder ignorieren diese E-Mail.'],
  }),
};
