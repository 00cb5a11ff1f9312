/**
 * `npm run seed`: migrates and seeds the configured database (same env as the server), or with
 * `--desktops N --user NAME` adds N benchmark desktops for a user.
 */
import { parseArgs } from 'node:util';
import { loadConfig } from '../platform/config/config.ts';
import { buildApp } from '../app.ts';
import { seedDesktops, seedIfEmpty } from './index.ts';

const { values } = parseArgs({
  options: { desktops: { type: 'string' }, user: { type: 'string', default: 'user' } },
});
const config = { ...loadConfig(), logLevel: 'warn' };
const app = await buildApp(config);
try {
  const result = await seedIfEmpty(app, { password: config.demoPassword });
  console.log(
    result.seeded
      ? `seeded demo accounts: ${result.usernames.join(', ')}`
      : 'database already has users; demo seed skipped',
  );
  if (result.generatedPassword) console.log(`demo password: ${result.generatedPassword}`);
  if (values.desktops) {
    const ids = await seedDesktops(app, values.user ?? 'user', Number(values.desktops));
    console.log(`added ${ids.length} desktops for ${values.user ?? 'user'}`);
  }
} finally {
  await app.close();
}
