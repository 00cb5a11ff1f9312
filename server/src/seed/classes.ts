/**
 * Demo classes, so deployments can be tried at once: a teacher (role advanced, `teacher`) and two
 * groups of students in the default category, "Class A" (student01 to student30) and "Class B"
 * (student31 to student42), all with the demo password (hashed once by the caller: each hash is
 * slow on purpose, and they share the password anyway). Class A takes the registration code
 * CLASS-A-2026 (./accounts.ts).
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { groups, type UserInsert } from '../platform/db/schema.ts';
import { userWrites } from '../domains/directory/index.ts';
import type { Executor } from '../platform/repository/entity-repository.ts';
import { ENROLLMENT_CODES, demoAccount } from './accounts.ts';

export const TEACHER_USERNAME = 'teacher';
export const CLASSES = [
  { id: 'default-class-a', name: 'Class A', first: 1, last: 30 },
  { id: 'default-class-b', name: 'Class B', first: 31, last: 42 },
] as const;

/** student01 ... student42. */
export const studentName = (n: number) => `student${String(n).padStart(2, '0')}`;

/** Adds the classes and the teacher to the default category (run inside the seed's transaction). */
export async function seedClasses(
  app: FastifyInstance,
  passwordHash: string,
  on: Executor = app.db,
): Promise<string[]> {
  await on.insert(groups).values(
    CLASSES.map((c) => ({
      id: c.id,
      categoryId: 'default',
      name: c.name,
      description: `Students of ${c.name}`,
      enrollment: ENROLLMENT_CODES.find((code) => code.groupId === c.id)?.enrollment ?? null,
    })),
  );
  const account = (username: string, name: string, groupId: string, role: UserInsert['role']) =>
    demoAccount({ id: randomUUID(), username, name, groupId, role, passwordHash });
  const rows: UserInsert[] = [
    account(TEACHER_USERNAME, 'Demo Teacher', 'default-advanced', 'advanced'),
  ];
  for (const c of CLASSES)
    for (let n = c.first; n <= c.last; n++)
      rows.push(account(studentName(n), `Student ${String(n).padStart(2, '0')}`, c.id, 'user'));
  await userWrites.createMany(on, rows);
  return rows.map((r) => r.username);
}
