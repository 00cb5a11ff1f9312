/**
 * Users as CSV. Export: username,name,email,role,category,group,active of the users the caller
 * reaches (category as its id, group as its name). Import: a header naming username, name,
 * email, role and group (password and category optional), every row checked before anything is
 * written; the rows with errors are reported as { row, username, code, field } and, unless it is
 * a dry run, every valid row is written in one transaction with its audit entry. Rows are matched
 * on the username within their category: an existing local account is updated, never duplicated.
 * A new user without a password gets a random one nobody is told and must choose another
 * (password_reset_required); the forgotten-password mail or an admin then sets it.
 *
 * Hashing is the slow part: each distinct password is hashed once, a few at a time, and the rows
 * without a password share one random secret per import (never shown, so as unknown as one each).
 */
import { randomUUID } from 'node:crypto';
import { and, eq, inArray } from 'drizzle-orm';
import { ApiError } from '../../platform/http/api-error.ts';
import { hashPassword } from '../../platform/auth/passwords.ts';
import {
  adminUserSnapshot,
  categories,
  groups,
  users,
  type GroupRow,
  type UserRow,
} from '../../platform/db/schema.ts';
import { csvFile } from '../../platform/lib/csv-file.ts';
import { checkPassword, nextHistory } from '../../platform/auth/password-policy.ts';
import type {
  AdminUserCsvImport,
  AdminUserCsvImportResult,
  Role,
} from '../../../../src/generated/types.ts';
import { reaches, requireStaff, type Actor } from '../../platform/auth/actor.ts';
import { appendAudit } from './audit.ts';
import { parseCsv, CsvSyntaxError } from './csv.ts';
import { generatePassword, passwordPolicyOf, type AdminDeps } from './deps.ts';
import type { UsersCrud } from './users-crud.ts';
import { userRowById } from './users.ts';
import { userWrites } from './user-writes.ts';
import { role, roles } from '../../../../src/generated/policy.ts';

export const EXPORT_HEADER = ['username', 'name', 'email', 'role', 'category', 'group', 'active'];
const REQUIRED = ['username', 'name', 'email', 'role', 'group'] as const;
const OPTIONAL = ['password', 'category'] as const;
type Column = (typeof REQUIRED)[number] | (typeof OPTIONAL)[number];

const ROLES: readonly Role[] = roles;
const USERNAME = /^[A-Za-z0-9._@-]{3,50}$/;
const EMAIL = /^[^@\s]+@[^@\s]+$/;
/** Hashes computed at once (argon2 runs on the libuv thread pool). */
const HASH_PARALLELISM = 4;

export async function exportUsersCsv(crud: UsersCrud, actor: Actor): Promise<string> {
  const list = await crud.list(actor);
  return csvFile(
    EXPORT_HEADER,
    list.map((u) => [
      u.username,
      u.name,
      u.email ?? '',
      u.role,
      u.category,
      u.group_name ?? u.group,
      u.active ? 'true' : 'false',
    ]),
  );
}

type RowError = AdminUserCsvImportResult['errors'][number];

interface ValidRow {
  line: number;
  username: string;
  name: string;
  email: string | null;
  role: Role;
  categoryId: string;
  groupId: string;
  password: string | undefined;
  existing: UserRow | undefined;
}

async function hashAll(passwords: readonly string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const queue = [...new Set(passwords)];
  const worker = async () => {
    for (let next = queue.shift(); next !== undefined; next = queue.shift())
      out.set(next, await hashPassword(next));
  };
  await Promise.all(Array.from({ length: HASH_PARALLELISM }, worker));
  return out;
}

export async function importUsersCsv(
  deps: AdminDeps,
  actor: Actor,
  body: AdminUserCsvImport,
): Promise<AdminUserCsvImportResult> {
  requireStaff(actor);
  const dryRun = body.dry_run ?? true;
  let records;
  try {
    records = parseCsv(body.csv);
  } catch (err) {
    if (err instanceof CsvSyntaxError)
      throw new ApiError('bad_request', err.message, 'csv_syntax', { row: err.line });
    throw err;
  }
  const [head, ...rows] = records;
  const header = (head?.cells ?? []).map((h) => h.trim().toLowerCase());
  const missing = REQUIRED.filter((c) => !header.includes(c));
  const unknown = header.filter(
    (h) => !(REQUIRED as readonly string[]).concat(OPTIONAL).includes(h),
  );
  if (missing.length > 0 || unknown.length > 0)
    throw new ApiError(
      'bad_request',
      'The CSV header is not username,name,email,role,group[,password][,category]',
      'csv_header',
      {
        missing,
        unknown,
      },
    );
  const col = (cells: string[], name: Column) => {
    const i = header.indexOf(name);
    return i < 0 ? undefined : (cells[i] ?? '').trim();
  };

  // Everything the checks look at, read once.
  const allCategories = await deps.db.select().from(categories);
  const allGroups = await deps.db.select().from(groups);
  const usernames = rows.map((r) => col(r.cells, 'username') ?? '');
  const existingUsers = usernames.length
    ? await deps.db
        .select()
        .from(users)
        .where(and(inArray(users.uid, usernames), eq(users.provider, 'local')))
    : [];
  const policies = new Map<string, Awaited<ReturnType<typeof passwordPolicyOf>>>();
  const policyOf = async (categoryId: string, role: Role) => {
    const key = `${categoryId}\n${role}`;
    if (!policies.has(key))
      policies.set(key, await passwordPolicyOf(deps, { categoryId, role, provider: 'local' }));
    return policies.get(key);
  };

  const errors: RowError[] = [];
  const valid: ValidRow[] = [];
  const seen = new Set<string>();
  for (const record of rows) {
    const c = record.cells;
    const username = col(c, 'username') ?? '';
    const fail = (code: string, field: string | null) =>
      errors.push({ row: record.line, username: username || null, code, field });
    if (!USERNAME.test(username)) {
      fail('validation', 'username');
      continue;
    }
    const name = col(c, 'name') ?? '';
    if (name.length < 1 || name.length > 100) {
      fail('validation', 'name');
      continue;
    }
    const email = col(c, 'email') ?? '';
    if (email !== '' && (email.length > 254 || !EMAIL.test(email))) {
      fail('validation', 'email');
      continue;
    }
    const rowRole = col(c, 'role') as Role;
    if (!ROLES.includes(rowRole)) {
      fail('validation', 'role');
      continue;
    }
    if (rowRole === role.admin && actor.role !== role.admin) {
      fail('forbidden', 'role');
      continue;
    }
    // The category: a manager's own; else the one named (id, URL name or name), else the group's.
    const categoryCell = col(c, 'category') ?? '';
    let categoryId: string | undefined;
    if (categoryCell !== '') {
      categoryId = allCategories.find(
        (k) => k.id === categoryCell || k.customUrlName === categoryCell || k.name === categoryCell,
      )?.id;
      if (!categoryId || !reaches(actor, categoryId)) {
        fail(categoryId ? 'forbidden' : 'not_found', 'category');
        continue;
      }
    } else if (actor.role !== role.admin) categoryId = actor.categoryId;
    const groupCell = col(c, 'group') ?? '';
    const candidates: GroupRow[] = allGroups.filter(
      (g) =>
        (g.id === groupCell || g.name === groupCell) &&
        reaches(actor, g.categoryId) &&
        (categoryId === undefined || g.categoryId === categoryId),
    );
    const group =
      candidates.find((g) => g.id === groupCell) ??
      (candidates.length === 1 ? candidates[0] : undefined);
    if (!group) {
      fail(candidates.length > 1 ? 'ambiguous' : 'not_found', 'group');
      continue;
    }
    categoryId = group.categoryId;
    const key = `${categoryId}\n${username}`;
    if (seen.has(key)) {
      fail('duplicate', 'username');
      continue;
    }
    seen.add(key);
    const existing = existingUsers.find((u) => u.uid === username && u.categoryId === categoryId);
    if (existing && existing.role === role.admin && actor.role !== role.admin) {
      fail('forbidden', 'username');
      continue;
    }
    const password = col(c, 'password') || undefined;
    if (password !== undefined) {
      try {
        await checkPassword(await policyOf(categoryId, rowRole), password, {
          username,
          history: existing?.passwordHistory ?? [],
        });
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        fail(err.descriptionCode, 'password');
        continue;
      }
    }
    valid.push({
      line: record.line,
      username,
      name,
      email: email === '' ? null : email,
      role: rowRole,
      categoryId,
      groupId: group.id,
      password,
      existing,
    });
  }

  const created = valid.filter((v) => !v.existing).length;
  const result = { dry_run: dryRun, created, updated: valid.length - created, errors };
  if (dryRun || valid.length === 0) return result;

  const needsRandom = valid.some((v) => !v.existing && v.password === undefined);
  const randomSecret = needsRandom ? generatePassword(undefined) : undefined;
  const hashes = await hashAll([
    ...valid.flatMap((v) => (v.password === undefined ? [] : [v.password])),
    ...(randomSecret ? [randomSecret] : []),
  ]);
  const sessionsToEnd: string[] = [];
  const rolesChanged: string[] = [];
  await deps.db.transaction(async (tx) => {
    for (const v of valid) {
      const secret = v.password ?? (v.existing ? undefined : randomSecret);
      const hash = secret === undefined ? undefined : hashes.get(secret);
      const oldPasswords = (await policyOf(v.categoryId, v.role))?.old_passwords ?? 0;
      const current = v.existing ? await userRowById(tx, v.existing.id) : undefined;
      if (current) {
        const changed = await userWrites.administer(tx, current.id, {
          name: v.name,
          email: v.email,
          ...(v.email !== current.email ? { emailVerified: false } : {}),
          role: v.role,
          groupId: v.groupId,
        });
        const after =
          changed && hash
            ? await userWrites.setPassword(tx, current.id, {
                passwordHash: hash,
                passwordHistory: nextHistory(current.passwordHistory, hash, oldPasswords),
              })
            : changed;
        if (!after) continue;
        if (hash) sessionsToEnd.push(current.id);
        else if (current.role !== v.role || current.groupId !== v.groupId)
          rolesChanged.push(current.id);
        await appendAudit(tx, actor, {
          action: 'adminUsers.importCsv',
          targetType: 'user',
          targetId: current.id,
          targetName: after.username,
          categoryId: after.categoryId,
          before: adminUserSnapshot(current),
          after: { ...adminUserSnapshot(after), ...(hash ? { password_changed: true } : {}) },
        });
        continue;
      }
      const id = randomUUID();
      const passwordHash = hash ?? null;
      const row = await userWrites.create(tx, {
        id,
        uid: v.username,
        username: v.username,
        name: v.name,
        provider: 'local',
        categoryId: v.categoryId,
        groupId: v.groupId,
        role: v.role,
        passwordHash,
        passwordHistory: passwordHash ? nextHistory([], passwordHash, oldPasswords) : [],
        passwordLastUpdated: new Date(),
        passwordResetRequired: v.password === undefined,
        email: v.email,
      });
      if (!row) continue;
      await appendAudit(tx, actor, {
        action: 'adminUsers.importCsv',
        targetType: 'user',
        targetId: id,
        targetName: row.username,
        categoryId: row.categoryId,
        before: null,
        after: adminUserSnapshot(row),
      });
    }
  });
  for (const id of sessionsToEnd) await deps.sessionsChanged(id, true);
  for (const id of rolesChanged) await deps.sessionsChanged(id, false);
  return result;
}
