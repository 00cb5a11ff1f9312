/** The account mails in Polish (minutes abbreviated, which needs no plural form). */
import type { MailTexts } from './types.ts';

export const pl: MailTexts = {
  verifyEmail: (v) => ({
    subject: 'Potwierdź swój adres e-mail',
    before: [
      `Witaj ${v.name},`,
      `potwierdź, że ${v.email} jest adresem Twojego konta ${v.username} w serwisie ${v.site}, otwierając ten link w ciągu ${v.minutes} min:`,
    ],
    action: 'Potwierdź mój adres',
    after: ['Jeśli ta prośba nie pochodzi od Ciebie, zignoruj tę wiadomość.'],
  }),
  resetPassword: (v) => ({
    subject: 'Zresetuj hasło',
    before: [
      `Witaj ${v.name},`,
      `ktoś poprosił o zresetowanie hasła do konta ${v.username} w serwisie ${v.site}. Otwórz ten link w ciągu ${v.minutes} min, aby ustawić nowe hasło:`,
    ],
    action: 'Ustaw nowe hasło',
    after: [
      'Link działa tylko raz. Jeśli ta prośba nie pochodzi od Ciebie, zignoruj tę wiadomość: Twoje hasło pozostanie bez zmian.',
    ],
  }),
  register: (v) => ({
    subject: 'Dokończ zakładanie konta',
    before: [
      `Witaj ${v.name},`,
      `aby utworzyć konto ${v.username} w serwisie ${v.site}, otwórz ten link w ciągu ${v.minutes} min i wpisz otrzymany kod rejestracyjny:`,
    ],
    action: 'Utwórz moje konto',
    after: ['Jeśli ta prośba nie pochodzi od Ciebie, zignoruj tę wiadomość.'],
  }),
  accountExists: (v) => ({
    subject: 'W sprawie prośby o rejestrację',
    before: [
      'Witaj,',
      `ktoś poprosił o utworzenie konta ${v.username} z tym adresem w serwisie ${v.site}, ale ta nazwa użytkownika lub ten adres są już zarejestrowane, więc nie utworzono żadnego konta.`,
      'Jeśli to Twoje konto i nie pamiętasz hasła, możesz je zresetować tutaj:',
    ],
    action: 'Zresetuj moje hasło',
    after: ['W przeciwnym razie wybierz inną nazwę użytkownika lub zignoruj tę wiadomość.'],
  }),
};
