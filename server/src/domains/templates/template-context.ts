/**
 * What every part of the template service shares: the app, where a template's disk goes, reading a
 * template as its caller may, pushing it to its owner, and what was made from it.
 */
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { and, eq, inArray, ne, or, sql } from 'drizzle-orm';
import { deployments, desktops, templates, type TemplateRow } from '../../platform/db/schema.ts';
import { ApiError } from '../../platform/http/api-error.ts';
import { canManageItem, type Caller } from '../../platform/lib/ownership.ts';
import type { AuthContext } from '../../platform/auth/auth.ts';
import type { NamedTemplate } from './catalog-repositories.ts';
import type { Executor } from '../../platform/repository/entity-repository.ts';
import { createReferenceCheck } from '../desktops/index.ts';
import type { DirectoryUser } from '../directory/index.ts';
import type { Template } from '../../../../src/generated/types.ts';
import { notFound, templateItem, type Derivatives } from './template-rules.ts';

export type TemplateContext = ReturnType<typeof createTemplateContext>;

export function createTemplateContext(app: FastifyInstance) {
  const { db } = app;
  const assertUsableReferences = createReferenceCheck(app);

  const diskPathOf = (id: string) => join(app.config.dataDir, 'templates', `${id}.qcow2`);

  const namedOne = async (id: string): Promise<NamedTemplate | undefined> =>
    (await app.templates.named(eq(templates.id, id)))[0];

  /** Pushes a template as it is now to its owner. */
  const publish = async (
    id: string,
    name: 'templates.created' | 'templates.updated',
  ): Promise<Template | undefined> => {
    const named = await namedOne(id);
    if (!named) return undefined;
    const owner: Caller = {
      userId: named.row.userId,
      role: named.ownerRole ?? 'user',
      categoryId: named.row.categoryId,
    };
    const payload = templateItem(named, owner);
    app.events.publish({ name, payload, ownerId: named.row.userId });
    return payload;
  };

  const publishRemoved = (row: TemplateRow) =>
    app.events.publish({
      name: 'templates.deleted',
      payload: { id: row.id, version: row.version + 1 },
      ownerId: row.userId,
    });

  /** The template the caller manages: 404 unknown, 403 somebody else's. */
  const templateFor = async (auth: AuthContext, id: string): Promise<NamedTemplate> => {
    const named = await namedOne(id);
    if (!named) throw notFound();
    if (!canManageItem(auth, { ...named.row, ownerRole: named.ownerRole }))
      throw new ApiError('forbidden', 'Not enough rights on this template', 'forbidden');
    return named;
  };

  const assertNameFree = async (
    userId: string,
    name: string,
    exceptId: string | undefined,
    on: Executor = db,
  ) => {
    const taken = await app.templates.list({
      where: and(
        eq(templates.userId, userId),
        sql`trim(${templates.name}) = ${name.trim()}`,
        exceptId ? ne(templates.id, exceptId) : undefined,
      ),
      on,
    });
    if (taken.length > 0)
      throw new ApiError(
        'conflict',
        'A template with this name already exists',
        'new_template_name_exists',
        { name: name.trim() },
      );
  };

  /** Everything made from a template, recursively (the template itself left out). */
  const derivativesOf = async (root: TemplateRow): Promise<Derivatives> => {
    const seen = new Set([root.id]);
    const found: Derivatives = { templates: [], desktops: [], deployments: [] };
    let frontier = [root.id];
    while (frontier.length > 0) {
      found.desktops.push(
        ...(await app.desktops.table.list({ where: inArray(desktops.templateId, frontier) })),
      );
      const children = (
        await app.templates.list({
          where: or(
            inArray(templates.parentId, frontier),
            inArray(templates.duplicateOf, frontier),
          ),
        })
      ).filter((t) => !seen.has(t.id));
      for (const t of children) seen.add(t.id);
      found.templates.push(...children);
      frontier = children.map((t) => t.id);
    }
    found.deployments = await app.deployments.list({
      where: inArray(deployments.templateId, [...seen]),
    });
    return found;
  };

  /** The owners of some rows, with their names and roles. */
  const ownersOf = async (rows: readonly { userId: string }[]) =>
    new Map<string, DirectoryUser>(
      (await app.directory.usersByIds([...new Set(rows.map((r) => r.userId))])).map((u) => [
        u.id,
        u,
      ]),
    );

  const manages = (
    auth: AuthContext,
    row: { userId: string; categoryId: string },
    owners: Map<string, DirectoryUser>,
  ) => canManageItem(auth, { ...row, ownerRole: owners.get(row.userId)?.role ?? null });

  return {
    app,
    db,
    assertUsableReferences,
    diskPathOf,
    namedOne,
    publish,
    publishRemoved,
    templateFor,
    assertNameFree,
    derivativesOf,
    ownersOf,
    manages,
  };
}
