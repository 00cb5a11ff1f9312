/**
 * A second demo category, "Second school" (`school2`), with its default group (named after it) and
 * its manager `manager2` (demo password): the administration area shows each manager only their
 * own category's users, groups and audit entries.
 */
import { randomUUID } from 'node:crypto';
import { categories, groups } from '../platform/db/schema.ts';
import { userWrites } from '../domains/directory/index.ts';
import type { Executor } from '../platform/repository/entity-repository.ts';
import { demoAccount } from './accounts.ts';

export const OTHER_CATEGORY = { id: 'school2', name: 'Second school' } as const;
export const OTHER_MANAGER_USERNAME = 'manager2';

export async function seedOtherCategory(on: Executor, passwordHash: string): Promise<void> {
  await on.insert(categories).values({
    id: OTHER_CATEGORY.id,
    name: OTHER_CATEGORY.name,
    description: 'A second demo category',
    customUrlName: OTHER_CATEGORY.id,
  });
  const groupId = `${OTHER_CATEGORY.id}-default`;
  await on.insert(groups).values({
    id: groupId,
    categoryId: OTHER_CATEGORY.id,
    name: OTHER_CATEGORY.name,
    description: `Default group of ${OTHER_CATEGORY.name}`,
  });
  await userWrites.createMany(on, [
    {
      ...demoAccount({
        id: randomUUID(),
        username: OTHER_MANAGER_USERNAME,
        name: 'Demo Manager (Second school)',
        groupId,
        role: 'manager',
        passwordHash,
      }),
      categoryId: OTHER_CATEGORY.id,
    },
  ]);
}
