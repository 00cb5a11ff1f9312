/** `npm run admin -- <command>`: the admin command line (./lib/admin-cli.ts) on this process. */
import { runAdmin } from './lib/admin-cli.ts';

process.exitCode = await runAdmin(process.argv.slice(2), {
  env: process.env,
  out: (line) => console.log(line),
  err: (line) => console.error(line),
});
