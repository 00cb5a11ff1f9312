/**
 * Bastion targets, one per desktop (table `bastion_targets`): read (made with the defaults at the
 * first read), replaced, their SSH keys and custom domain set, listed for their owner. Every
 * operation needs `can_use_bastion` (403 `forbidden`) and a desktop the caller may use; custom
 * domains need `can_use_bastion_individual_domains`. Writes bump the version and reach the owner's
 * sockets (`targets_add`, `targets_update`).
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { and, eq, getTableColumns, ne, sql } from 'drizzle-orm';
import type { AuthContext } from '../../platform/auth/auth.ts';
import { ApiError } from '../../platform/http/api-error.ts';
import {
  bastionReadToWire,
  bastionTargets,
  bastionTargetsComputed,
  type BastionInsert,
} from '../../platform/db/schema.ts';
import { defaults } from '../../../../src/generated/constants.ts';
import type {
  Bastion,
  BastionHttp,
  BastionSsh,
  BastionUpdate,
} from '../../../../src/generated/types.ts';
import { bastionRights, type BastionRights } from './bastion-rights.ts';
import {
  assertCnameFor,
  assertDomainFree,
  normalizeDomain,
  systemCnameResolver,
  type CnameResolver,
} from './bastion-domains.ts';

const columns = { ...getTableColumns(bastionTargets), ...bastionTargetsComputed };

export interface BastionService {
  show(auth: AuthContext, desktopId: string): Promise<Bastion>;
  update(auth: AuthContext, desktopId: string, body: BastionUpdate): Promise<void>;
  list(auth: AuthContext): Promise<Bastion[]>;
  setAuthorizedKeys(auth: AuthContext, desktopId: string, keys: string[]): Promise<void>;
  setDomain(auth: AuthContext, desktopId: string, domain: string | null): Promise<void>;
  /** The target of an id or a custom domain, whoever owns it (the SSH and HTTP bastions). */
  byIdOrDomain(key: { id?: string; domain?: string }): Promise<Bastion | undefined>;
  /** How custom domains' CNAME records are read (tests replace it). */
  resolveCname: CnameResolver;
}

/** Ports a client left empty take the bastion defaults (80, 443 and 22). */
function withDefaultPorts(
  http: Partial<BastionHttp>,
  ssh: Partial<BastionSsh>,
): Pick<BastionInsert, 'http' | 'ssh'> {
  return {
    http: { ...defaults.BastionHttp, ...http },
    ssh: { ...defaults.BastionSsh, authorized_keys: [], ...ssh },
  };
}

export function createBastionService(app: FastifyInstance): BastionService {
  const rightsOf = async (auth: AuthContext): Promise<BastionRights> => {
    const rights = bastionRights(await app.settings.all(), auth.role);
    if (!rights.use) throw new ApiError('forbidden', 'User can not use bastion', 'forbidden');
    return rights;
  };

  const read = async (where: ReturnType<typeof eq>): Promise<Bastion | undefined> => {
    const [row] = await app.db.select(columns).from(bastionTargets).where(where);
    return row ? bastionReadToWire(row) : undefined;
  };

  const announce = (target: Bastion, created: boolean) =>
    app.events.publish({
      name: created ? 'bastion.created' : 'bastion.updated',
      payload: target,
      ownerId: target.user_id,
    });

  /** The desktop's target, made with the defaults when it has none. */
  const ensure = async (auth: AuthContext, desktopId: string): Promise<Bastion> => {
    const desktop = await app.desktopService.desktopFor(auth, desktopId);
    const existing = await read(eq(bastionTargets.desktopId, desktop.id));
    if (existing) return existing;
    const inserted = await app.db
      .insert(bastionTargets)
      .values({
        id: randomUUID(),
        desktopId: desktop.id,
        userId: desktop.userId,
        domain: null,
        ...withDefaultPorts({}, {}),
      })
      .onConflictDoNothing()
      .returning({ id: bastionTargets.id });
    const target = await read(eq(bastionTargets.desktopId, desktop.id));
    if (!target) throw new ApiError('not_found', 'Desktop not found', 'not_found');
    if (inserted.length > 0) announce(target, true);
    return target;
  };

  const write = async (target: Bastion, patch: Partial<BastionInsert>): Promise<void> => {
    try {
      await app.db
        .update(bastionTargets)
        .set({ ...patch, version: sql`${bastionTargets.version} + 1` })
        .where(eq(bastionTargets.id, target.id));
    } catch (err) {
      if ((err as { code?: string }).code === '23505')
        throw new ApiError(
          'conflict',
          'That domain is already used',
          'bastion_domain_already_exists',
        );
      throw err;
    }
    const updated = await read(eq(bastionTargets.id, target.id));
    if (updated) announce(updated, false);
  };

  /** A new custom domain passes the duplicate check, then the CNAME check. */
  const checkedDomain = async (
    target: Bastion,
    wanted: string | null | undefined,
    rights: BastionRights,
  ): Promise<string | null> => {
    const domain = normalizeDomain(wanted);
    if (!domain || domain === (target.domain ?? null)) return domain;
    const [other] = await app.db
      .select({ id: bastionTargets.id })
      .from(bastionTargets)
      .where(and(eq(bastionTargets.domain, domain), ne(bastionTargets.id, target.id)));
    const portalHost = app.config.publicUrl ? new URL(app.config.publicUrl).hostname : null;
    assertDomainFree(domain, [rights.domain, portalHost], Boolean(other));
    await assertCnameFor(
      service.resolveCname,
      domain,
      rights.domain ? `${target.id}.${rights.domain}` : null,
    );
    return domain;
  };

  const service: BastionService = {
    resolveCname: systemCnameResolver,

    async show(auth, desktopId) {
      await rightsOf(auth);
      return ensure(auth, desktopId);
    },

    async update(auth, desktopId, body) {
      const rights = await rightsOf(auth);
      const target = await ensure(auth, desktopId);
      // Without the right to custom domains the domain is cleared, whatever was sent.
      const domain = rights.individualDomains
        ? await checkedDomain(target, body.domain, rights)
        : null;
      await write(target, { ...withDefaultPorts(body.http, body.ssh), domain });
    },

    async list(auth) {
      await rightsOf(auth);
      const rows = await app.db
        .select(columns)
        .from(bastionTargets)
        .where(eq(bastionTargets.userId, auth.userId));
      return rows.map(bastionReadToWire);
    },

    async setAuthorizedKeys(auth, desktopId, keys) {
      await rightsOf(auth);
      const desktop = await app.desktopService.desktopFor(auth, desktopId);
      const target = await read(eq(bastionTargets.desktopId, desktop.id));
      if (!target)
        throw new ApiError('not_found', 'The desktop has no bastion target', 'not_found');
      const authorized = keys.map((k) => k.trim()).filter(Boolean);
      await write(target, { ssh: { ...target.ssh, authorized_keys: authorized } });
    },

    async setDomain(auth, desktopId, domain) {
      const rights = await rightsOf(auth);
      if (!rights.individualDomains)
        throw new ApiError('forbidden', 'User can not use individual domains', 'forbidden');
      const target = await ensure(auth, desktopId);
      await write(target, { domain: await checkedDomain(target, domain, rights) });
    },

    async byIdOrDomain(key) {
      if (key.id) return read(eq(bastionTargets.id, key.id));
      const domain = normalizeDomain(key.domain);
      return domain ? read(eq(bastionTargets.domain, domain)) : undefined;
    },
  };
  return service;
}
