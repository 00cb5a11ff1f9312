/**
 * The portal groups a login provider's group attribute (LDAP `attr_groups`, OIDC `claim_groups`,
 * SAML `attr_groups`) puts an account in.
 *
 * Each value names a group of the account's category by its id or its name (the name compared
 * without regard to case); a distinguished name (`cn=class-a,ou=groups,dc=school`) names it by its
 * first part's value too (`class-a`). Values that name no group of the category are ignored. The
 * first group named becomes the main group and the others the secondary groups; when none is
 * named, the main group is the provider's mapped group and there are no secondary groups.
 *
 * They apply when the account is created, and at each later sign-in when the provider says so
 * (`groups_at_each_login`). A provider without a group attribute leaves groups alone.
 */
import { and, eq, or, sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { groups, type UserRow } from '../../platform/db/schema.ts';

/** Where the group values put an account: its main group and secondary groups. */
export interface GroupPlacement {
  groupId: string;
  secondaryGroups: string[];
}

/** The texts a value may name a group by: itself, and a distinguished name's first value. */
function namesOf(value: string): string[] {
  const rdn = /^\s*[A-Za-z][\w-]*\s*=\s*((?:\\.|[^,+\\])+)\s*[,+]/.exec(value)?.[1]?.trim();
  return rdn && rdn !== value ? [value.trim(), rdn] : [value.trim()];
}

/**
 * The placement the values give in the category, the provider's group as the fallback main group;
 * undefined when the provider has no group attribute (`values` undefined).
 */
export async function placementOf(
  app: FastifyInstance,
  categoryId: string,
  fallbackGroupId: string,
  values: readonly string[] | undefined,
): Promise<GroupPlacement | undefined> {
  if (values === undefined) return undefined;
  const named = values.flatMap(namesOf).filter((name) => name !== '');
  if (named.length === 0) return { groupId: fallbackGroupId, secondaryGroups: [] };
  const lower = named.map((name) => name.toLowerCase());
  const candidates = await app.db
    .select({ id: groups.id, name: groups.name })
    .from(groups)
    .where(
      and(
        eq(groups.categoryId, categoryId),
        or(
          sql`${groups.id} IN (${sql.join(
            named.map((n) => sql`${n}`),
            sql`, `,
          )})`,
          sql`lower(${groups.name}) IN (${sql.join(
            lower.map((n) => sql`${n}`),
            sql`, `,
          )})`,
        ),
      ),
    );
  const ids: string[] = [];
  for (const [index, name] of named.entries()) {
    const group =
      candidates.find((g) => g.id === name) ??
      candidates.find((g) => g.name.toLowerCase() === lower[index]);
    if (group && !ids.includes(group.id)) ids.push(group.id);
  }
  const [main, ...secondary] = ids;
  return main
    ? { groupId: main, secondaryGroups: secondary }
    : { groupId: fallbackGroupId, secondaryGroups: [] };
}

/** The known account placed again when the provider says so; the account as it now is. */
export async function replaceGroups(
  app: FastifyInstance,
  account: UserRow,
  placement: GroupPlacement | undefined,
): Promise<UserRow> {
  if (!placement) return account;
  const same =
    account.groupId === placement.groupId &&
    account.secondaryGroups.length === placement.secondaryGroups.length &&
    account.secondaryGroups.every((id, i) => id === placement.secondaryGroups[i]);
  if (same) return account;
  await app.users.update(account.id, placement);
  app.cluster.publish({ kind: 'user.changed', userId: account.id });
  return { ...account, ...placement };
}
