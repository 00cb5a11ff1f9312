/**
 * The desktops' networks as data (adminNetworks, admins only): their plain CRUD, the three seeded
 * at boot (`default` nat, `private` isolated, `wireguard` vpn; named from the network prefix and
 * NAT subnet), the definitions the host side reads at each start, and the networks a caller may
 * give a desktop's cards.
 *
 * Who may use a network: the roles, categories, groups and users its allowed lists name (admins
 * always); the form shows the roles as a list (every role = everyone) and the categories as ids.
 * A network's name is its id (what a desktop's hardware names) and stays, as do its kind and
 * bridge; there is one vpn network at most, and it is not deleted. A network a desktop has a card
 * on is not deleted, and its subnet does not change while such a desktop runs (409
 * `network_in_use`). Every committed write brings the host's bridge in step (`host`).
 */
import { and, count, eq, inArray, ne, sql } from 'drizzle-orm';
import { ApiError } from '../../platform/http/api-error.ts';
import {
  adminNetworkFromCreate,
  adminNetworkFromUpdate,
  adminNetworkReadToWire,
  desktops,
  networks,
  type AdminNetworkReadRow,
  type AdminNetworkRow,
} from '../../platform/db/schema.ts';
import type { Db } from '../../platform/db/client.ts';
import type { Executor } from '../../platform/repository/entity-repository.ts';
import { crudService } from '../../platform/crud/crud-service.ts';
import {
  cidrOf,
  octetsOf,
  seededNetworks,
  type NetworkDef,
} from '../../platform/hypervisor/network-defs.ts';
import type {
  AdminNetwork,
  AdminNetworkCreate,
  AdminNetworkUpdate,
  Allowed,
  HardwareAllowedItem,
  Role,
} from '../../../../src/generated/types.ts';
import { desktopStates, hasRoleAtLeast, role } from '../../../../src/generated/policy.ts';
import { appendAudit } from '../directory/index.ts';
import {
  allowedFrom,
  checkLists,
  listsAllow,
  rolesOf,
  type Directory,
  type ListsCaller,
} from '../../platform/lib/allowed-lists.ts';

/** What the CRUD tells the host side after a committed write. */
export interface NetworkHost {
  define(def: NetworkDef, before?: NetworkDef): Promise<void>;
  remove(def: NetworkDef): Promise<void>;
}

const defOf = (row: AdminNetworkRow): NetworkDef => ({
  id: row.id,
  kind: row.kind,
  bridge: row.bridge,
  subnet: octetsOf(row.subnet) ?? row.subnet,
});

const categoriesOf = (allowed: Allowed): string[] =>
  Array.isArray(allowed.categories) ? allowed.categories : [];

const withCategories = (allowed: Allowed, categories: readonly string[] | undefined): Allowed =>
  categories === undefined
    ? allowed
    : { ...allowed, categories: categories.length > 0 ? [...categories] : false };

const inUse = (what: string, count: number) =>
  new ApiError('conflict', `Desktops ${what}`, 'network_in_use', { desktops: count });

/** How many desktops have a card on the network (running ones only when asked). */
async function desktopsOn(tx: Executor, id: string, running = false): Promise<number> {
  const onIt = sql`${desktops.hardware}->'interfaces' @> jsonb_build_array(${id}::text)`;
  const [row] = await tx
    .select({ n: count() })
    .from(desktops)
    .where(running ? and(onIt, inArray(desktops.state, desktopStates.maybeRunning)) : onIt);
  return Number(row?.n ?? 0);
}

/** 409 `network_exists` when another network has this subnet. */
async function checkSubnetFree(tx: Executor, subnet: string, id: string): Promise<void> {
  const [taken] = await tx
    .select({ id: networks.id })
    .from(networks)
    .where(and(eq(networks.subnet, subnet), ne(networks.id, id)));
  if (taken)
    throw new ApiError('conflict', 'Another network has this subnet', 'network_exists', {
      subnet,
    });
}

/** The networks' plain CRUD; the host side follows each committed write. */
export function networksCrud(db: Db, directory: Directory, host: NetworkHost) {
  return crudService<'networks', AdminNetwork, AdminNetworkCreate, AdminNetworkUpdate>(db, {
    resource: 'adminNetworks',
    storage: 'networks',
    label: 'Network',
    toWire: (row) => ({
      ...adminNetworkReadToWire(row as AdminNetworkReadRow),
      allowed_roles: rolesOf(row.allowed),
      allowed_categories: categoriesOf(row.allowed),
    }),
    fromCreate: adminNetworkFromCreate,
    fromUpdate: adminNetworkFromUpdate,
    orderBy: ['name'],
    audit: { targetType: 'network', append: appendAudit },
    conflict: (values) =>
      new ApiError(
        'conflict',
        'A network of this name, bridge or subnet exists',
        'network_exists',
        { name: values.name ?? null, bridge: values.bridge ?? null, subnet: values.subnet ?? null },
      ),
    hooks: {
      async beforeCreate({ tx }, body) {
        await checkLists(directory, body.allowed);
        if (body.kind === 'vpn') {
          const [vpn] = await tx
            .select({ id: networks.id })
            .from(networks)
            .where(eq(networks.kind, 'vpn'));
          if (vpn)
            throw new ApiError('conflict', 'There is a VPN network already', 'network_vpn_exists', {
              id: vpn.id,
            });
        }
        const allowed = allowedFrom({}, body.allowed_roles ?? [], body.allowed);
        return {
          id: body.name,
          description: body.description?.trim() || null,
          allowed: withCategories(allowed, body.allowed_categories ?? []),
        };
      },
      async beforeUpdate({ tx, before }, body) {
        await checkLists(directory, body.allowed);
        if (body.subnet !== undefined && body.subnet !== before.subnet) {
          await checkSubnetFree(tx, body.subnet, before.id);
          const running = await desktopsOn(tx, before.id, true);
          if (running > 0) throw inUse('run on this network', running);
        }
        const lists =
          body.allowed_roles !== undefined || body.allowed !== undefined
            ? allowedFrom(before.allowed, body.allowed_roles, body.allowed)
            : before.allowed;
        return {
          ...(body.description === undefined
            ? {}
            : { description: body.description?.trim() || null }),
          ...(lists !== before.allowed || body.allowed_categories !== undefined
            ? { allowed: withCategories(lists, body.allowed_categories) }
            : {}),
        };
      },
      async beforeDelete({ tx, before }) {
        if (before.kind === 'vpn')
          throw new ApiError(
            'precondition_required',
            'The VPN network is not deleted',
            'network_vpn_not_deletable',
          );
        const count = await desktopsOn(tx, before.id);
        if (count > 0) throw inUse('have a card on this network', count);
        return {};
      },
      async afterCommit(_actor, { before, after }) {
        if (after) await host.define(defOf(after), before ? defOf(before) : undefined);
        else if (before) await host.remove(defOf(before));
      },
    },
  });
}

/** Seeds the three networks unless they exist (their rows are the admins' afterwards). */
export async function seedNetworks(db: Db, prefix: string, natSubnet: string): Promise<void> {
  const names = {
    nat: 'NAT network with outbound access',
    isolated: 'Private network: the desktops and the host, nothing beyond',
    vpn: 'The network the users’ VPN reaches',
  } as const;
  await db
    .insert(networks)
    .values(
      seededNetworks(prefix, natSubnet).map((def) => ({
        id: def.id,
        name: def.id,
        description: names[def.kind],
        kind: def.kind,
        bridge: def.bridge,
        subnet: cidrOf(def.subnet),
        allowed: { roles: [], categories: false, groups: false, users: false } satisfies Allowed,
      })),
    )
    .onConflictDoNothing();
}

/** Every network as the host side needs it. */
export async function readNetworkDefs(db: Db): Promise<NetworkDef[]> {
  return (await db.select().from(networks).orderBy(networks.name)).map(defOf);
}

/** The VPN network (the bridge the users' tunnels reach), if there is one. */
export async function vpnNetwork(db: Db): Promise<NetworkDef | undefined> {
  const [row] = await db.select().from(networks).where(eq(networks.kind, 'vpn')).limit(1);
  return row ? defOf(row) : undefined;
}

/** Every network as the hardware catalog offers it: allowed when the caller may use it. */
export async function networkItems(
  db: Db,
  auth: ListsCaller & { role: Role },
): Promise<HardwareAllowedItem[]> {
  const rows = await db.select().from(networks).orderBy(networks.name);
  return rows.map((row) => ({
    id: row.id,
    name: row.name,
    description: row.description ?? '',
    allowed: listsAllow(auth, row.allowed),
    editable: hasRoleAtLeast(auth.role, role.admin),
  }));
}
