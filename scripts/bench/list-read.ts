/**
 * The desktop list's read on the server, CPU only: `npx tsx scripts/bench/list-read.ts [--desktops 5000] [--reads 12]`.
 * Builds the app on the embedded PGlite in a fresh temp DATA_DIR, seeds the demo accounts and N
 * desktops for `user`, then reads `user`'s list (`app.desktops.listForUser`, what GET
 * /user/desktops answers before its JSON and compression) again and again, and prints the CPU time
 * of each read in this process (process.cpuUsage: the database and the driver run in it) and the
 * median without the first two. It also checks that every record equals toWire of its whole row
 * (what a desktop event carries) for the first 200.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { eq } from 'drizzle-orm';
import { buildApp } from '../../server/src/app.ts';
import { toWire } from '../../server/src/domains/desktops/desktop-wire.ts';
import { loadConfig } from '../../server/src/platform/config/config.ts';
import { users } from '../../server/src/platform/db/schema.ts';
import { seedDesktops, seedIfEmpty } from '../../server/src/seed/index.ts';

const { values } = parseArgs({
  options: {
    desktops: { type: 'string', default: '5000' },
    reads: { type: 'string', default: '12' },
  },
});
const PASSWORD = 'bench-demo-password';
const dataDir = mkdtempSync(join(tmpdir(), 'vdi-bench-list-read-'));
const env = {
  PORT: '0',
  HOST: '127.0.0.1',
  DATA_DIR: dataDir,
  DEMO_PASSWORD: PASSWORD,
  LOG_LEVEL: 'error',
};
const app = await buildApp({ ...loadConfig(env, process.cwd()), prepareImages: false });
try {
  await seedIfEmpty(app, { password: PASSWORD });
  await seedDesktops(app, 'user', Number(values.desktops));
  const [owner] = await app.db
    .select({ id: users.id })
    .from(users)
    .where(eq(users.username, 'user'));
  if (!owner) throw new Error('no demo user');
  const list = await app.desktops.listForUser(owner.id);
  let differing = 0;
  for (const desktop of list.slice(0, 200)) {
    const row = await app.desktops.byId(desktop.id);
    if (!row || JSON.stringify(toWire(row)) !== JSON.stringify(desktop)) differing++;
  }
  const cpu: number[] = [];
  for (let i = 0; i < Number(values.reads); i++) {
    const before = process.cpuUsage();
    await app.desktops.listForUser(owner.id);
    const spent = process.cpuUsage(before);
    cpu.push((spent.user + spent.system) / 1000);
  }
  const sorted = cpu.slice(2).sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
  console.log(
    `${list.length} desktops; records unlike toWire of their row: ${differing} of ${Math.min(200, list.length)}`,
  );
  console.log(
    `list read CPU: median ${median.toFixed(1)} ms [${cpu.map((ms) => ms.toFixed(0)).join(' ')}]`,
  );
  process.exitCode = differing ? 1 : 0;
} finally {
  await app.close();
  rmSync(dataDir, { recursive: true, force: true });
}
