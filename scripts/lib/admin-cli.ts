/**
 * The admin command line behind `npm run admin -- <command>` (scripts/admin.ts): the
 * administration on the database the server uses (DATA_DIR or DATABASE_URL, migrated first). It
 * calls the same service functions as the API, as an admin named `cli`, so every write lands in
 * the audit log. With the embedded database (no DATABASE_URL) stop the server first: one process
 * at a time opens it. Bad input returns exit code 2 and writes one line to the error output.
 */
import { parseArgs } from 'node:util';
import { openDatabase, type Database } from '../../server/src/platform/db/client.ts';
import { migrate } from '../../server/src/platform/db/migrate.ts';
import { loadConfig } from '../../server/src/platform/config/config.ts';
import { ApiError } from '../../server/src/platform/http/api-error.ts';
import { notifyNodes } from '../../server/src/platform/events/cluster-bus.ts';
import { adminService, type AdminService } from '../../server/src/domains/directory/service.ts';
import { CLI_ACTOR } from '../../server/src/platform/auth/actor.ts';
import { generatePassword, passwordPolicyOf } from '../../server/src/domains/directory/deps.ts';
import {
  defaultSettings,
  type AccountPolicy,
} from '../../server/src/platform/repository/settings-repository.ts';
import type { Role } from '../../src/generated/types.ts';

const HELP = `Usage: npm run admin -- <command> [options]

  user add <username> --role <admin|manager|advanced|user> --group <group id or name>
           [--category <id>] [--name <full name>] [--email <address>] [--password <password>]
      Creates a local account. Without --password a random one is printed.
  user passwd <username> [--category <id>] [--password <password>]
      Sets a new password (printed when generated); the user must change it at the next login.
  user list
      Lists the users: username, role, category, group, active.
  category add <name> [--description <text>]
      Creates a category and its default group; prints the category id.
  group add <name> --category <id> [--description <text>]
      Creates a group in the category; prints its id.
  --help
      Shows this text.

The database is the server's: DATA_DIR (default ./data) or DATABASE_URL.`;

class UsageError extends Error {}

/** Where the command line reads its environment and writes its lines. */
export interface AdminIo {
  env: NodeJS.ProcessEnv;
  out(line: string): void;
  err(line: string): void;
  /** an open database to use (and leave open) instead of opening the configured one */
  database?: Database;
}

const COMMANDS = ['user add', 'user passwd', 'user list', 'category add', 'group add'];
const ROLES: readonly Role[] = ['admin', 'manager', 'advanced', 'user'];

function parse(argv: string[]) {
  try {
    return parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        role: { type: 'string' },
        group: { type: 'string' },
        category: { type: 'string' },
        name: { type: 'string' },
        email: { type: 'string' },
        password: { type: 'string' },
        description: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

type Parsed = ReturnType<typeof parse>;

const need = (value: string | undefined, what: string): string => {
  if (value === undefined || value === '') throw new UsageError(`missing ${what}`);
  return value;
};

async function accountPolicies(database: Database): Promise<readonly AccountPolicy[]> {
  const rows = await database.query<{ value: AccountPolicy[] }>(
    "SELECT value FROM settings WHERE key = 'account_policies'",
  );
  return rows[0]?.value ?? defaultSettings.account_policies;
}

async function run(service: AdminService, args: Parsed, io: AdminIo): Promise<void> {
  const [noun, verb, subject, ...rest] = args.positionals;
  if (rest.length > 0) throw new UsageError(`unexpected argument ${rest[0] ?? ''}`);
  const o = args.values;
  const key = `${noun ?? ''} ${verb ?? ''}`;
  switch (key) {
    case 'user add': {
      const username = need(subject, 'username');
      const role = need(o.role, '--role') as Role;
      if (!ROLES.includes(role)) throw new UsageError(`unknown role ${role}`);
      const groups = await service.groups.find(CLI_ACTOR, need(o.group, '--group'), o.category);
      if (groups.length === 0) throw new UsageError(`no group ${o.group ?? ''}`);
      if (groups.length > 1)
        throw new UsageError(`several groups are named ${o.group ?? ''}: pass --category`);
      const group = groups[0];
      if (!group) throw new UsageError(`no group ${o.group ?? ''}`);
      const categoryId = o.category ?? group.categoryId;
      const policy = await passwordPolicyOf(service.deps, {
        categoryId,
        role,
        provider: 'local',
      });
      const password = o.password ?? generatePassword(policy);
      const { id } = await service.users.create(CLI_ACTOR, {
        username,
        name: o.name ?? username,
        email: o.email ?? null,
        role,
        category: categoryId,
        group: group.id,
        password,
        password_reset_required: o.password === undefined,
      });
      io.out(`created user ${username} (${id}) in category ${categoryId}`);
      if (o.password === undefined) io.out(`password: ${password}`);
      return;
    }
    case 'user passwd': {
      const username = need(subject, 'username');
      const found = await service.users.findByName(CLI_ACTOR, username, o.category);
      if (found.length === 0) throw new UsageError(`no user ${username}`);
      if (found.length > 1)
        throw new UsageError(`${username} exists in several categories: pass --category`);
      const user = found[0];
      if (!user) throw new UsageError(`no user ${username}`);
      const policy = await passwordPolicyOf(service.deps, user);
      const password = o.password ?? generatePassword(policy);
      await service.users.setPassword(CLI_ACTOR, user.id, {
        password,
        password_reset_required: true,
      });
      io.out(`password of ${username} (category ${user.categoryId}) set`);
      if (o.password === undefined) io.out(`password: ${password}`);
      return;
    }
    case 'user list': {
      if (subject !== undefined) throw new UsageError(`unexpected argument ${subject}`);
      for (const u of await service.users.list(CLI_ACTOR))
        io.out(
          [
            u.username,
            u.role,
            u.category,
            u.group_name ?? u.group,
            u.active ? 'active' : 'disabled',
          ].join('\t'),
        );
      return;
    }
    case 'category add': {
      const { id } = await service.categories.create(CLI_ACTOR, {
        name: need(subject, 'category name'),
        description: o.description ?? '',
      });
      io.out(`created category ${id}`);
      return;
    }
    case 'group add': {
      const { id } = await service.groups.create(CLI_ACTOR, {
        name: need(subject, 'group name'),
        category: need(o.category, '--category'),
        description: o.description ?? '',
      });
      io.out(`created group ${id}`);
      return;
    }
    default:
      throw new UsageError(`unknown command "${key.trim()}" (see --help)`);
  }
}

/** Runs one command; resolves to the exit code (0, or 2 on bad input). */
export async function runAdmin(argv: string[], io: AdminIo): Promise<number> {
  let args: Parsed;
  try {
    args = parse(argv);
  } catch (err) {
    io.err(`admin: ${(err as Error).message}`);
    return 2;
  }
  if (args.values.help || args.positionals.length === 0) {
    io.out(HELP);
    return args.values.help ? 0 : 2;
  }
  const [noun, verb] = args.positionals;
  if (!COMMANDS.includes(`${noun ?? ''} ${verb ?? ''}`)) {
    io.err(`admin: unknown command "${args.positionals.join(' ')}" (see --help)`);
    return 2;
  }
  const config = loadConfig(io.env);
  const database =
    io.database ??
    (await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir }));
  try {
    await migrate(database);
    const service = adminService({
      db: database.db,
      accountPolicies: () => accountPolicies(database),
      // Running nodes on PostgreSQL hear it on the cluster bus (their sockets and consoles close);
      // otherwise the server reads sessions from the database within its cache time.
      async sessionsChanged(userId, revoke) {
        const revoked = revoke
          ? await database.query<{ id: string }>(
              'UPDATE sessions SET revoked_at = now() WHERE user_id = $1 AND revoked_at IS NULL RETURNING id',
              [userId],
            )
          : [];
        await notifyNodes(database, { kind: 'user.changed', userId }, 'cli');
        if (revoked.length > 0)
          await notifyNodes(
            database,
            { kind: 'sessions.revoked', ids: revoked.map((r) => r.id) },
            'cli',
          );
      },
    });
    await run(service, args, io);
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      io.err(`admin: ${err.message}`);
      return 2;
    }
    if (err instanceof ApiError && err.statusCode < 500) {
      io.err(`admin: ${err.description} (${err.descriptionCode})`);
      return 2;
    }
    throw err;
  } finally {
    if (!io.database) await database.close();
  }
}
