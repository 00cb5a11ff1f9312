/** The account mails in Basque. */
import type { MailTexts } from './types.ts';

export const eu: MailTexts = {
  verifyEmail: (v) => ({
    subject: 'Berretsi zure helbide elektronikoa',
    before: [
      `Kaixo, ${v.name}:`,
      `Berretsi ${v.email} dela ${v.site} guneko zure ${v.username} kontuaren helbidea, esteka hau ${v.minutes} minutuko epean irekiz:`,
    ],
    action: 'Berretsi nire helbidea',
    after: ['Zuk eskatu ez baduzu, ez egin kasurik mezu honi.'],
  }),
  resetPassword: (v) => ({
    subject: 'Berrezarri zure pasahitza',
    before: [
      `Kaixo, ${v.name}:`,
      `Norbaitek ${v.site} guneko ${v.username} kontuaren pasahitza berrezartzeko eskatu du. Ireki esteka hau ${v.minutes} minutuko epean pasahitz berri bat aukeratzeko:`,
    ],
    action: 'Aukeratu pasahitz berria',
    after: [
      'Estekak behin bakarrik balio du. Zuk eskatu ez baduzu, ez egin kasurik mezu honi: zure pasahitza bere horretan geratzen da.',
    ],
  }),
  register: (v) => ({
    subject: 'Amaitu zure kontua sortzen',
    before: [
      `Kaixo, ${v.name}:`,
      `${v.site} gunean ${v.username} kontua sortzeko, ireki esteka hau ${v.minutes} minutuko epean eta idatzi eman dizuten erregistro-kodea:`,
    ],
    action: 'Sortu nire kontua',
    after: ['Zuk eskatu ez baduzu, ez egin kasurik mezu honi.'],
  }),
  accountExists: (v) => ({
    subject: 'Zure izen-emate eskaerari buruz',
    before: [
      'Kaixo:',
      `Norbaitek ${v.username} kontua helbide honekin ${v.site} gunean sortzeko eskatu du, baina erabiltzaile-izen hori edo helbide hau erregistratuta dago jada; beraz, ez da konturik sortu.`,
      'Kontua zurea bada eta pasahitza ahaztu baduzu, hemen berrezar dezakezu:',
    ],
    action: 'Berrezarri nire pasahitza',
    after: ['Bestela, aukeratu beste erabiltzaile-izen bat edo ez egin kasurik mezu honi.'],
  }),
};
