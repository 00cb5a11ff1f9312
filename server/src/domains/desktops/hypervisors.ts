/**
 * The hypervisor hosts as data (adminHypervisors, admins only): their plain CRUD, the host `local`
 * (the portal's own QEMU, seeded at boot, never deleted, its URI fixed) and the host of
 * `HYPERVISOR_URI` (seeded and kept at that URI at boot), and the reads placement, the drivers
 * and the health probe use.
 *
 * The console address (where a host's VNC and SPICE listen, the console proxies' target) is by
 * default the host name of the URI, and follows a new URI while it was that default; the host
 * local's is 127.0.0.1, fixed like its URI.
 *
 * The SSH key (the path of a private key file on the portal's machine) is write-only: a create or
 * update may send it, no answer, audit snapshot or log line carries it (the answers say only
 * whether one is stored). A host that runs or starts desktops is not deleted.
 */
import os from 'node:os';
import { eq, sql } from 'drizzle-orm';
import { ApiError } from '../../platform/http/api-error.ts';
import {
  adminHypervisorFromCreate,
  adminHypervisorFromUpdate,
  adminHypervisorReadToWire,
  hypervisors,
  hypervisorsComputed,
  type AdminHypervisorReadRow,
} from '../../platform/db/schema.ts';
import type { Db } from '../../platform/db/client.ts';
import { crudService } from '../../platform/crud/crud-service.ts';
import { LOCAL_HOST, type HostConfig } from '../../platform/hypervisor/host-drivers.ts';
import type { PlacementHost } from '../../platform/hypervisor/placement.ts';
import type {
  AdminHypervisor,
  AdminHypervisorCreate,
  AdminHypervisorUpdate,
} from '../../../../src/generated/types.ts';
import { appendAudit } from '../directory/index.ts';

/** The host `HYPERVISOR_URI` names (its id and name). */
export const URI_HOST = 'hypervisor-uri';

const MIB = 1024 * 1024;

/** The hypervisors' plain CRUD; `changed` runs after every committed write. */
export function hypervisorsCrud(db: Db, changed: () => void) {
  return crudService<'hypervisors', AdminHypervisor, AdminHypervisorCreate, AdminHypervisorUpdate>(
    db,
    {
      resource: 'adminHypervisors',
      storage: 'hypervisors',
      label: 'Hypervisor',
      toWire: (row) => adminHypervisorReadToWire(row as AdminHypervisorReadRow),
      fromCreate: adminHypervisorFromCreate,
      fromUpdate: adminHypervisorFromUpdate,
      orderBy: ['name'],
      audit: { targetType: 'hypervisor', append: appendAudit },
      conflict: (values) =>
        new ApiError('conflict', 'A hypervisor of this name exists', 'hypervisor_exists', {
          name: values.name ?? null,
        }),
      hooks: {
        async beforeCreate(_ctx, body) {
          return {
            id: body.name,
            consoleAddress: body.console_address ?? uriHostName(body.uri),
            gpuProfiles: body.gpu_profiles ?? [],
            sshKey: body.ssh_key ?? null,
          };
        },
        async beforeUpdate({ before }, body) {
          if (
            before.id === LOCAL_HOST &&
            (body.uri !== undefined || body.console_address !== undefined)
          )
            throw new ApiError(
              'precondition_required',
              'The host local is the portal’s own QEMU: it has no URI',
              'hypervisor_local_fixed',
            );
          const followsUri =
            body.uri !== undefined &&
            body.console_address === undefined &&
            before.consoleAddress === uriHostName(before.uri ?? '');
          return {
            ...(followsUri && body.uri ? { consoleAddress: uriHostName(body.uri) } : {}),
            ...(body.gpu_profiles === undefined ? {} : { gpuProfiles: body.gpu_profiles }),
            ...(body.ssh_key === undefined ? {} : { sshKey: body.ssh_key }),
          };
        },
        async beforeDelete({ tx, before }) {
          if (before.id === LOCAL_HOST)
            throw new ApiError(
              'precondition_required',
              'The host local is not deleted',
              'hypervisor_local_not_deletable',
            );
          const [row] = await tx
            .select({ running: hypervisorsComputed.running })
            .from(hypervisors)
            .where(eq(hypervisors.id, before.id));
          if ((row?.running ?? 0) > 0)
            throw new ApiError(
              'precondition_required',
              'Desktops run on this hypervisor',
              'hypervisor_has_desktops',
              { running: row?.running ?? 0 },
            );
          return {};
        },
        async afterCommit() {
          changed();
        },
      },
    },
  );
}

/**
 * Seeds the host `local` (this machine's CPUs and memory; disabled when `HYPERVISOR_URI` names
 * the host that runs the desktops) and keeps the host of `HYPERVISOR_URI` at that URI.
 */
export async function seedHosts(db: Db, hypervisorUri: string | undefined): Promise<void> {
  const capacity = {
    vcpus: os.cpus().length,
    memoryMib: Math.floor(os.totalmem() / MIB),
    lastSeen: new Date(),
  };
  await db
    .insert(hypervisors)
    .values({ id: LOCAL_HOST, name: LOCAL_HOST, uri: null, enabled: !hypervisorUri, ...capacity })
    .onConflictDoNothing();
  if (!hypervisorUri) return;
  await db
    .insert(hypervisors)
    .values({
      id: URI_HOST,
      name: URI_HOST,
      uri: hypervisorUri,
      consoleAddress: uriHostName(hypervisorUri),
      ...capacity,
    })
    .onConflictDoUpdate({ target: hypervisors.id, set: { uri: hypervisorUri } });
}

/** Every host with what the drivers, placement and the probe read. */
export async function readHosts(db: Db): Promise<(HostConfig & PlacementHost)[]> {
  const rows = await db
    .select({
      id: hypervisors.id,
      uri: hypervisors.uri,
      sshKey: hypervisors.sshKey,
      consoleAddress: hypervisors.consoleAddress,
      enabled: hypervisors.enabled,
      draining: hypervisors.draining,
      lastSeen: hypervisors.lastSeen,
      memoryMib: hypervisors.memoryMib,
      gpuProfiles: hypervisors.gpuProfiles,
      running: hypervisorsComputed.running,
      usedMemoryMib: hypervisorsComputed.runningMemoryMib,
    })
    .from(hypervisors)
    .orderBy(hypervisors.name);
  return rows.map((r) => ({
    ...r,
    running: Number(r.running),
    usedMemoryMib: Number(r.usedMemoryMib),
  }));
}

/** The host a desktop is pinned to exists (404 `hypervisor_not_found`). */
export async function assertHostExists(db: Db, hostId: string): Promise<void> {
  const [row] = await db
    .select({ id: hypervisors.id })
    .from(hypervisors)
    .where(eq(hypervisors.id, hostId));
  if (!row)
    throw new ApiError('not_found', 'The hypervisor does not exist', 'hypervisor_not_found', {
      hypervisor: hostId,
    });
}

/** Records that a host answered now. */
export async function markSeen(db: Db, hostId: string): Promise<void> {
  await db
    .update(hypervisors)
    .set({ lastSeen: sql`now()` })
    .where(eq(hypervisors.id, hostId));
}

/** The host of a libvirt URI that names an SSH key file: the URI with `keyfile=` set to it. */
export function uriWithKey(uri: string, key: string | null): string {
  if (!key) return uri;
  const at = uri.indexOf('?');
  const base = at < 0 ? uri : uri.slice(0, at);
  const params = at < 0 ? [] : uri.slice(at + 1).split('&');
  const kept = params.filter((p) => p !== '' && !p.startsWith('keyfile='));
  return `${base}?${[`keyfile=${key}`, ...kept].join('&')}`;
}

/**
 * The host name of a libvirt URI (`qemu+ssh://user@10.0.0.5:22/system` -> `10.0.0.5`, an IPv6
 * address without its brackets); 127.0.0.1 for a URI without one (`qemu:///session`).
 */
export function uriHostName(uri: string): string {
  const match = /^[a-z+]+:\/\/(?:[^@/]*@)?(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)?(?::\d+)?\//.exec(
    uri,
  );
  const host = match?.[1]?.replace(/^\[|\]$/g, '');
  return host || '127.0.0.1';
}
