/** The account mails in Spanish. */
import type { MailTexts } from './types.ts';

export const es: MailTexts = {
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
