/**
 * The account mails in English, Spanish, Catalan, French and German, chosen by the user's
 * language (English otherwise). Each mail is a plain-text version and a simple HTML one with the
 * same paragraphs; the link stands on its own line in the text and is the only anchor in the HTML.
 */

export type MailKind = 'verifyEmail' | 'resetPassword' | 'register' | 'accountExists';

export const MAIL_LANGUAGES = ['en', 'es', 'ca', 'fr', 'de'] as const;
export type MailLanguage = (typeof MAIL_LANGUAGES)[number];

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

interface MailTemplate {
  subject: string;
  /** paragraphs before the link */
  before: string[];
  /** the link's label in the HTML */
  action: string;
  /** paragraphs after the link */
  after: string[];
}

type Texts = Record<MailKind, (v: MailVariables) => MailTemplate>;

const en: Texts = {
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

const es: Texts = {
  verifyEmail: (v) => ({
    subject: 'Confirma tu dirección de correo',
    before: [
      `Hola ${v.name}:`,
      `Confirma que ${v.email} es la dirección de tu cuenta ${v.username} en ${v.site} abriendo este enlace en los próximos ${v.minutes} minutos:`,
    ],
    action: 'Confirmar mi dirección',
    after: ['Si no lo has pedido, ignora este correo.'],
  }),
  resetPassword: (v) => ({
    subject: 'Restablece tu contraseña',
    before: [
      `Hola ${v.name}:`,
      `Alguien ha pedido restablecer la contraseña de la cuenta ${v.username} en ${v.site}. Abre este enlace en los próximos ${v.minutes} minutos para elegir una contraseña nueva:`,
    ],
    action: 'Elegir una contraseña nueva',
    after: [
      'El enlace funciona una sola vez. Si no lo has pedido, ignora este correo: tu contraseña no cambia.',
    ],
  }),
  register: (v) => ({
    subject: 'Termina de crear tu cuenta',
    before: [
      `Hola ${v.name}:`,
      `Para crear la cuenta ${v.username} en ${v.site}, abre este enlace en los próximos ${v.minutes} minutos e introduce el código de registro que te han dado:`,
    ],
    action: 'Crear mi cuenta',
    after: ['Si no lo has pedido, ignora este correo.'],
  }),
  accountExists: (v) => ({
    subject: 'Sobre tu solicitud de registro',
    before: [
      'Hola:',
      `Alguien ha pedido crear la cuenta ${v.username} con esta dirección en ${v.site}, pero ese nombre de usuario o esta dirección ya están registrados, así que no se ha creado ninguna cuenta.`,
      'Si la cuenta es tuya y has olvidado la contraseña, puedes restablecerla aquí:',
    ],
    action: 'Restablecer mi contraseña',
    after: ['Si no, elige otro nombre de usuario o ignora este correo.'],
  }),
};

const ca: Texts = {
  verifyEmail: (v) => ({
    subject: 'Confirma la teva adreça de correu',
    before: [
      `Hola ${v.name},`,
      `Confirma que ${v.email} és l'adreça del teu compte ${v.username} a ${v.site} obrint aquest enllaç en els propers ${v.minutes} minuts:`,
    ],
    action: 'Confirmar la meva adreça',
    after: ['Si no ho has demanat, ignora aquest correu.'],
  }),
  resetPassword: (v) => ({
    subject: 'Restableix la teva contrasenya',
    before: [
      `Hola ${v.name},`,
      `Algú ha demanat restablir la contrasenya del compte ${v.username} a ${v.site}. Obre aquest enllaç en els propers ${v.minutes} minuts per triar una contrasenya nova:`,
    ],
    action: 'Triar una contrasenya nova',
    after: [
      "L'enllaç funciona una sola vegada. Si no ho has demanat, ignora aquest correu: la teva contrasenya no canvia.",
    ],
  }),
  register: (v) => ({
    subject: 'Acaba de crear el teu compte',
    before: [
      `Hola ${v.name},`,
      `Per crear el compte ${v.username} a ${v.site}, obre aquest enllaç en els propers ${v.minutes} minuts i introdueix el codi de registre que t'han donat:`,
    ],
    action: 'Crear el meu compte',
    after: ['Si no ho has demanat, ignora aquest correu.'],
  }),
  accountExists: (v) => ({
    subject: 'Sobre la teva sol·licitud de registre',
    before: [
      'Hola,',
      `Algú ha demanat crear el compte ${v.username} amb aquesta adreça a ${v.site}, però aquest nom d'usuari o aquesta adreça ja estan registrats, així que no s'ha creat cap compte.`,
      "Si el compte és teu i n'has oblidat la contrasenya, la pots restablir aquí:",
    ],
    action: 'Restablir la meva contrasenya',
    after: ["Si no, tria un altre nom d'usuari o ignora aquest correu."],
  }),
};

const fr: Texts = {
  verifyEmail: (v) => ({
    subject: 'Confirmez votre adresse e-mail',
    before: [
      `Bonjour ${v.name},`,
      `Confirmez que ${v.email} est l'adresse de votre compte ${v.username} sur ${v.site} en ouvrant ce lien dans les ${v.minutes} minutes :`,
    ],
    action: 'Confirmer mon adresse',
    after: ["Si vous n'avez rien demandé, ignorez ce message."],
  }),
  resetPassword: (v) => ({
    subject: 'Réinitialisez votre mot de passe',
    before: [
      `Bonjour ${v.name},`,
      `Quelqu'un a demandé la réinitialisation du mot de passe du compte ${v.username} sur ${v.site}. Ouvrez ce lien dans les ${v.minutes} minutes pour choisir un nouveau mot de passe :`,
    ],
    action: 'Choisir un nouveau mot de passe',
    after: [
      "Le lien ne fonctionne qu'une fois. Si vous n'avez rien demandé, ignorez ce message : votre mot de passe ne change pas.",
    ],
  }),
  register: (v) => ({
    subject: 'Terminez la création de votre compte',
    before: [
      `Bonjour ${v.name},`,
      `Pour créer le compte ${v.username} sur ${v.site}, ouvrez ce lien dans les ${v.minutes} minutes et saisissez le code d'inscription qui vous a été remis :`,
    ],
    action: 'Créer mon compte',
    after: ["Si vous n'avez rien demandé, ignorez ce message."],
  }),
  accountExists: (v) => ({
    subject: "À propos de votre demande d'inscription",
    before: [
      'Bonjour,',
      `Quelqu'un a demandé la création du compte ${v.username} avec cette adresse sur ${v.site}, mais ce nom d'utilisateur ou cette adresse est déjà enregistré : aucun compte n'a été créé.`,
      'Si le compte est le vôtre et que vous avez oublié son mot de passe, vous pouvez le réinitialiser ici :',
    ],
    action: 'Réinitialiser mon mot de passe',
    after: ["Sinon, choisissez un autre nom d'utilisateur ou ignorez ce message."],
  }),
};

const de: Texts = {
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

const TEXTS: Record<MailLanguage, Texts> = { en, es, ca, fr, de };

/** The mail language for a user's `lang` (`es`, `es-ES`, `es_ES`...), English otherwise. */
export function mailLanguage(lang: string | null | undefined): MailLanguage {
  const base = (lang ?? '').toLowerCase().split(/[-_]/)[0] ?? '';
  return (MAIL_LANGUAGES as readonly string[]).includes(base) ? (base as MailLanguage) : 'en';
}

const escapeHtml = (text: string) =>
  text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');

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
