/** The account mails in French. */
import type { MailTexts } from './types.ts';

export const fr: MailTexts = {
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
