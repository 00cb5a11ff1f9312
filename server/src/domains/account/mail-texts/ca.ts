/** The account mails in Catalan. */
import type { MailTexts } from './types.ts';

export const ca: MailTexts = {
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
