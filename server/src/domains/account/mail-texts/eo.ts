/** The account mails in Esperanto. */
import type { MailTexts } from './types.ts';

export const eo: MailTexts = {
  verifyEmail: (v) => ({
    subject: 'Konfirmu vian retpoŝtadreson',
    before: [
      `Saluton ${v.name},`,
      `Konfirmu, ke ${v.email} estas la adreso de via konto ${v.username} ĉe ${v.site}, malfermante ĉi tiun ligilon ene de ${v.minutes} minutoj:`,
    ],
    action: 'Konfirmi mian adreson',
    after: ['Se vi ne petis tion, ignoru ĉi tiun mesaĝon.'],
  }),
  resetPassword: (v) => ({
    subject: 'Restarigu vian pasvorton',
    before: [
      `Saluton ${v.name},`,
      `Iu petis restarigi la pasvorton de la konto ${v.username} ĉe ${v.site}. Malfermu ĉi tiun ligilon ene de ${v.minutes} minutoj por elekti novan pasvorton:`,
    ],
    action: 'Elekti novan pasvorton',
    after: [
      'La ligilo funkcias nur unufoje. Se vi ne petis tion, ignoru ĉi tiun mesaĝon: via pasvorto restas kia ĝi estas.',
    ],
  }),
  register: (v) => ({
    subject: 'Finu la kreadon de via konto',
    before: [
      `Saluton ${v.name},`,
      `Por krei la konton ${v.username} ĉe ${v.site}, malfermu ĉi tiun ligilon ene de ${v.minutes} minutoj kaj entajpu la registran kodon, kiun vi ricevis:`,
    ],
    action: 'Krei mian konton',
    after: ['Se vi ne petis tion, ignoru ĉi tiun mesaĝon.'],
  }),
  accountExists: (v) => ({
    subject: 'Pri via aliĝpeto',
    before: [
      'Saluton,',
      `Iu petis krei la konton ${v.username} kun ĉi tiu adreso ĉe ${v.site}, sed tiu uzantnomo aŭ ĉi tiu adreso jam estas registrita, do neniu konto estis kreita.`,
      'Se la konto estas via kaj vi forgesis ĝian pasvorton, vi povas restarigi ĝin ĉi tie:',
    ],
    action: 'Restarigi mian pasvorton',
    after: ['Alie elektu alian uzantnomon, aŭ ignoru ĉi tiun mesaĝon.'],
  }),
};
