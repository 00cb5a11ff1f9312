/**
 * Desktop lifecycle (reference server-resources section 3): start/stop/reset/retry, create from a
 * template (persistent and temporary), edit, info, delete to the recycle bin or permanently,
 * recreate disk, allowed hardware, quota check, and the viewers (browser VNC ticket, SPICE file).
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { and, eq } from 'drizzle-orm';
import { route } from '../../lib/route.ts';
import { constants } from '../../../../src/generated/constants.ts';
import type { Query } from '../../db/client.ts';
import { ApiError } from '../../lib/api-error.ts';
import { assertDesktopAccess, isAllowed } from '../../lib/ownership.ts';
import { authOf, type AuthContext } from '../../plugins/app/auth.ts';
import { desktops, recycleBin, templates, type DesktopRow } from '../../db/schema.ts';
import {
  assertActionOffered,
  assertStateAllows,
  checkViewers,
  stockImageOf,
} from '../../engine/desktop-rules.ts';
import {
  appliedQuota,
  assertHardwareWithin,
  checkDesktopCreate,
  checkDesktopStart,
  hardwareLimits,
} from '../../engine/quotas.ts';
import { spiceFile } from '../../viewers/viewer-files.ts';
import { readCardImage, saveCardImage } from '../../engine/card-images.ts';
import { VNC_WS_PATH } from '../../viewers/vnc-proxy.ts';
import type {
  DesktopCreate,
  DesktopHardware,
  DesktopInfo,
  DesktopUpdate,
  ViewerKey,
} from '../../../../src/generated/types.ts';

const subjectOf = (auth: AuthContext) => ({
  userId: auth.userId,
  groupId: auth.groupId,
  categoryId: auth.categoryId,
  role: auth.role,
});

/** The stored hardware of a new desktop: template hardware overridden by what was sent. */
function mergeHardware(
  base: Record<string, unknown>,
  sent: DesktopHardware | undefined,
): Record<string, unknown> {
  return withGpuVideo({ ...constants.desktops.newDesktopHardware.value, ...base, ...(sent ?? {}) });
}

/** Spec section 4: a GPU-less desktop's video setting is reset to Default (GPU-only video needs a GPU profile). */
function withGpuVideo(hardware: Record<string, unknown>): Record<string, unknown> {
  const vgpus = (
    (hardware.reservables as { vgpus?: string[] | null } | undefined)?.vgpus ?? []
  ).filter((v) => v !== 'None');
  const videos = (hardware.videos as string[] | undefined) ?? [];
  return vgpus.length === 0 && videos.includes('none')
    ? { ...hardware, videos: ['default'] }
    : hardware;
}

/** Card image of a create/update body: a stock card id, or an uploaded file stored now. */
async function cardImageOf(
  dataDir: string,
  image: DesktopCreate['image'],
): Promise<Record<string, unknown> | undefined> {
  if (!image) return undefined;
  if (image.type === 'user' && image.file) return saveCardImage(dataDir, image.file.data);
  if (image.type === 'stock' && image.id) return { type: 'stock', id: image.id, url: '' };
  return undefined;
}

/** Base64 card images (≤ 3 MiB decoded) ride in the JSON body of create and update. */
const IMAGE_BODY_LIMIT = 5 * 1024 * 1024;

function viewerKeys(gp: Record<string, unknown>): ViewerKey[] {
  const v = (gp.viewers ?? {}) as Record<string, unknown>;
  return Object.keys(v).map((k) => k.replace(/_/g, '-') as ViewerKey);
}

export default async function desktopLifecycleRoutes(app: FastifyInstance) {
  const { db } = app;

  const desktopFor = async (request: FastifyRequest): Promise<DesktopRow> => {
    const { id } = request.params as { id: string };
    return assertDesktopAccess(authOf(request), await app.desktops.byId(id));
  };
  const templateById = async (id: string) =>
    (await db.select().from(templates).where(eq(templates.id, id)).limit(1))[0];
  /** 409 new_desktop_name_exists when the user has another desktop with this (trimmed) name. */
  const assertUniqueName = async (
    query: Query,
    userId: string,
    name: string,
    exceptId?: string,
  ) => {
    const rows = await query(
      'SELECT id FROM desktops WHERE user_id = $1 AND trim(name) = $2 AND id <> $3 LIMIT 1',
      [userId, name.trim(), exceptId ?? ''],
    );
    if (rows.length)
      throw new ApiError(
        'conflict',
        'A desktop with this name already exists',
        'new_desktop_name_exists',
        { name: name.trim() },
      );
  };

  route(app, 'desktops.action', async (request) => {
    const { action } = request.params as { action: string; id: string };
    const desktop = await desktopFor(request);
    const auth = authOf(request);
    // The generated state-action table (x-actions) is the contract: an action not offered in the
    // desktop's current state is refused, whatever the client shows.
    switch (action) {
      case 'start': {
        assertActionOffered(desktop, ['start', 'create'], 'start');
        const hw = desktop.hardware as { memory?: number; vcpus?: number };
        await checkDesktopStart(app.database.query, subjectOf(auth), {
          memory: Number(hw.memory ?? 1),
          vcpus: Number(hw.vcpus ?? 1),
        });
        return { status: await app.engine.start(desktop.id) };
      }
      case 'stop':
        assertActionOffered(desktop, ['stop', 'forceStop'], 'stop');
        return { status: await app.engine.stop(desktop.id) };
      case 'reset':
        assertActionOffered(desktop, ['reset'], 'reset');
        return { status: await app.engine.reset(desktop.id) };
      case 'updating':
        assertActionOffered(desktop, ['updating'], 'update');
        return { status: await app.engine.retry(desktop.id) };
      default:
        throw new ApiError('bad_request', `Unknown action ${action}`, 'bad_request', { action });
    }
  });

  route(
    app,
    'desktops.create',
    async (request) => {
      const auth = authOf(request);
      const body = request.body as DesktopCreate;
      const template = await templateById(body.template_id);
      if (!template || !template.enabled)
        throw new ApiError('not_found', 'Template not found', 'not_found');
      if (!isAllowed(auth, template))
        throw new ApiError('forbidden', 'Template not allowed', 'template_not_allowed');
      const gp = (body.guest_properties ?? template.guestProperties) as Record<string, unknown>;
      const hardware = mergeHardware(template.hardware, body.hardware);
      checkViewers({
        viewers: gp.viewers as Record<string, unknown> | undefined,
        interfaces: hardware.interfaces as string[],
        videos: hardware.videos as string[],
      });
      assertHardwareWithin(
        hardwareLimits(await appliedQuota(app.database.query, subjectOf(auth))),
        body.hardware ?? {},
      );
      const id = randomUUID();
      const image = (await cardImageOf(app.config.dataDir, body.image)) ?? stockImageOf(id);
      await app.database.transaction(async (_exec, query) => {
        // One create at a time per user, so a quota with one unit left admits exactly one desktop.
        await query('SELECT pg_advisory_xact_lock(hashtext($1))', [auth.userId]);
        await checkDesktopCreate(query, subjectOf(auth), 'desktops');
        // Inside the transaction's own connection: PGlite has a single one.
        await assertUniqueName(query, auth.userId, body.name);
        await query(
          `INSERT INTO desktops (id, user_id, category_id, group_id, name, description, type, state, template_id, hardware, guest_properties, image)
         VALUES ($1, $2, $3, $4, $5, $6, 'persistent', 'creating', $7, $8, $9, $10)`,
          [
            id,
            auth.userId,
            auth.categoryId,
            auth.groupId,
            body.name.trim(),
            body.description ?? template.description,
            template.id,
            JSON.stringify(hardware),
            JSON.stringify(gp),
            JSON.stringify(image),
          ],
        );
      });
      await app.desktops.publishCurrent(id, 'desktops.created');
      app.engine.background(app.engine.createDisk(id), 'disk creation failed', id);
      return { id };
    },
    { bodyLimit: IMAGE_BODY_LIMIT },
  );

  route(app, 'desktops.createNonpersistent', async (request) => {
    const auth = authOf(request);
    const { template: templateId } = request.body as { template: string };
    const template = await templateById(templateId);
    if (!template || !template.enabled)
      throw new ApiError('not_found', 'Template not found', 'not_found');
    if (!isAllowed(auth, template))
      throw new ApiError('forbidden', 'Template not allowed', 'template_not_allowed');
    const hw = template.hardware as { memory?: number; vcpus?: number };
    await checkDesktopStart(app.database.query, subjectOf(auth), {
      memory: Number(hw.memory ?? 1),
      vcpus: Number(hw.vcpus ?? 1),
    });
    const existing = await db
      .select()
      .from(desktops)
      .where(
        and(
          eq(desktops.userId, auth.userId),
          eq(desktops.type, 'nonpersistent'),
          eq(desktops.templateId, template.id),
        ),
      );
    if (existing.length === 1 && existing[0]) {
      const d = existing[0];
      if (d.state !== 'started') await app.engine.start(d.id).catch(() => undefined);
      return { id: d.id };
    }
    for (const d of existing) await removeDesktop(d, true);
    await checkDesktopCreate(app.database.query, subjectOf(auth), 'volatile');
    const created = await app.desktops.create({
      userId: auth.userId,
      categoryId: auth.categoryId,
      groupId: auth.groupId,
      name: template.name,
      description: template.description,
      type: 'nonpersistent',
      state: 'creating',
      templateId: template.id,
      hardware: mergeHardware(template.hardware, undefined),
      guestProperties: template.guestProperties,
      image: template.image,
    });
    app.engine.background(
      app.engine.createDisk(created.id, { startAfter: true }),
      'disk creation failed',
      created.id,
    );
    return { id: created.id };
  });

  /** Stops the VM, deletes the row and the disk (no recycle bin). */
  const removeDesktop = async (desktop: DesktopRow, deleteDisk: boolean) => {
    await app.engine.destroy(desktop.id, { deleteDisk });
    app.viewers.vnc.closeDesktop(desktop.id);
    await app.desktops.remove(desktop.id);
  };

  route(app, 'desktops.deleteNonpersistent', async (request) => {
    const desktop = await desktopFor(request);
    if (desktop.type !== 'nonpersistent')
      throw new ApiError('bad_request', 'Not a temporary desktop', 'bad_request');
    await removeDesktop(desktop, true);
    return {};
  });

  const deleteDesktop = async (request: FastifyRequest, permanent: boolean) => {
    const auth = authOf(request);
    const desktop = await desktopFor(request);
    assertStateAllows('delete', desktop.state);
    const settings = await app.settings.all();
    const cutoff = (settings as { recycle_bin_cutoff_time?: number | null })
      .recycle_bin_cutoff_time;
    if (permanent || cutoff === 0 || desktop.tag !== null) {
      await removeDesktop(desktop, true);
      return {};
    }
    const diskPath = desktop.diskPath ?? app.engine.diskPath(desktop.id);
    const size = await app.hypervisor
      .diskInfo(diskPath)
      .then((i) => i.actualSize)
      .catch(() => 0);
    await app.engine.destroy(desktop.id, { deleteDisk: false });
    const entry = {
      id: randomUUID(),
      ownerId: desktop.userId,
      agentId: auth.userId,
      itemType: 'desktop',
      itemName: desktop.name,
      status: 'recycled',
      size,
      data: {
        desktops: [{ ...desktop, runtime: {}, state: 'stopped' }],
        storages: [
          { id: desktop.id, directory_path: diskPath, status: 'recycled', actual_size: size },
        ],
        agent_name: auth.name,
      },
    };
    await db.insert(recycleBin).values(entry);
    await app.desktops.remove(desktop.id);
    app.events.publish({
      name: 'recycle-bins.created',
      payload: {
        id: entry.id,
        item_type: 'desktop',
        item_name: desktop.name,
        status: 'recycled',
        size,
        accessed: Math.floor(Date.now() / 1000),
        desktops: 1,
        templates: 0,
        deployments: 0,
        storages: 1,
      },
      ownerId: desktop.userId,
    });
    return {};
  };
  route(app, 'desktops.delete', (request) => deleteDesktop(request, false));
  route(app, 'desktops.deletePermanent', (request) => deleteDesktop(request, true));

  route(
    app,
    'desktops.update',
    async (request) => {
      const auth = authOf(request);
      const desktop = await desktopFor(request);
      const body = request.body as DesktopUpdate;
      if (body.server !== undefined && !['admin', 'manager'].includes(auth.role))
        throw new ApiError('forbidden', 'Only admins and managers set servers', 'forbidden');
      if (desktop.server && (body.hardware || body.guest_properties))
        throw new ApiError(
          'precondition_required',
          'A server can not be edited',
          'server_not_editable',
        );
      assertStateAllows('edit', desktop.state);
      if (body.name !== undefined)
        await assertUniqueName(app.database.query, desktop.userId, body.name, desktop.id);
      const hardware = withGpuVideo({
        ...(desktop.hardware as Record<string, unknown>),
        ...(body.hardware ?? {}),
      });
      const gp = body.guest_properties
        ? { ...(desktop.guestProperties as Record<string, unknown>), ...body.guest_properties }
        : (desktop.guestProperties as Record<string, unknown>);
      if (body.hardware || body.guest_properties) {
        checkViewers({
          viewers: gp.viewers as Record<string, unknown> | undefined,
          interfaces: hardware.interfaces as string[],
          videos: hardware.videos as string[],
        });
        assertHardwareWithin(
          hardwareLimits(await appliedQuota(app.database.query, subjectOf(auth))),
          body.hardware ?? {},
        );
      }
      const patch: Parameters<typeof app.desktops.update>[1] = { hardware, guestProperties: gp };
      if (body.name !== undefined) patch.name = body.name.trim();
      if (body.description !== undefined) patch.description = body.description;
      if (body.server !== undefined) patch.server = body.server;
      const image = await cardImageOf(app.config.dataDir, body.image);
      if (image) patch.image = image;
      const updated = await app.desktops.update(desktop.id, patch, ['stopped', 'failed']);
      if (!updated)
        throw new ApiError(
          'precondition_required',
          'The desktop changed state',
          'desktop_not_stopped',
        );
      const { image: _image, ...echo } = body;
      return image ? { ...echo, image } : echo;
    },
    { bodyLimit: IMAGE_BODY_LIMIT },
  );

  route(app, 'desktops.cardImage', async (request, reply) => {
    const { file } = request.params as { file: string };
    const { data, mime } = await readCardImage(app.config.dataDir, file);
    reply
      .header('Cache-Control', 'private, max-age=86400')
      .header('X-Content-Type-Options', 'nosniff')
      .type(mime);
    return data;
  });

  route(app, 'desktops.updateReservables', async (request) => {
    const desktop = await desktopFor(request);
    const { reservables } = request.body as { reservables: { vgpus?: string[] | null } };
    const vgpus = (reservables.vgpus ?? []).filter((v) => v !== 'None');
    // No GPU profile is bookable on this installation yet: only "None" exists.
    if (vgpus.length > 0)
      throw new ApiError('not_found', 'Unknown GPU profile', 'not_found', { vgpus });
    if (desktop.server && vgpus.length > 0)
      throw new ApiError(
        'precondition_required',
        'Servers can not have GPUs',
        'server_not_editable',
      );
    await app.desktops.update(desktop.id, {
      hardware: { ...(desktop.hardware as Record<string, unknown>), reservables: { vgpus: null } },
    });
    return {};
  });

  route(app, 'desktops.show', async (request) => {
    const auth = authOf(request);
    const { id } = request.params as { id: string };
    const desktop = await app.desktops.byId(id);
    if (desktop) {
      assertDesktopAccess(auth, desktop);
      const info: DesktopInfo = {
        id: desktop.id,
        kind: 'desktop',
        name: desktop.name,
        description: desktop.description,
        image: desktop.image as DesktopInfo['image'],
        guest_properties: desktop.guestProperties as DesktopInfo['guest_properties'],
        hardware: desktop.hardware as DesktopInfo['hardware'],
        server: desktop.server,
        state: desktop.state as DesktopInfo['state'],
        limited_hardware: null,
      };
      return info;
    }
    const template = await templateById(id);
    if (!template) throw new ApiError('not_found', 'Desktop not found', 'not_found');
    if (!isAllowed(auth, template))
      throw new ApiError('forbidden', 'Template not allowed', 'template_not_allowed');
    const info: DesktopInfo = {
      id: template.id,
      kind: 'template',
      name: template.name,
      description: template.description,
      image: template.image as DesktopInfo['image'],
      guest_properties: template.guestProperties as DesktopInfo['guest_properties'],
      hardware: mergeHardware(template.hardware, undefined) as DesktopInfo['hardware'],
      limited_hardware: null,
    };
    return info;
  });

  route(app, 'desktops.hardwareAllowed', async (request) => {
    const auth = authOf(request);
    const applied = await appliedQuota(app.database.query, subjectOf(auth));
    const item = (id: string, name: string, description = '') => ({
      id,
      name,
      description,
      allowed: true,
      editable: auth.role === 'admin',
    });
    return {
      interfaces: [item('default', 'Default', 'NAT network')],
      graphics: [item('default', 'Default')],
      videos: [item('default', 'Default'), item('virtio', 'Virtio')],
      boot_order: [item('disk', 'Hard disk'), item('iso', 'CD/DVD'), item('floppy', 'Floppy')],
      disk_bus: [
        item('default', 'Default'),
        item('virtio', 'Virtio'),
        item('ide', 'IDE'),
        item('sata', 'SATA'),
      ],
      reservables: { vgpus: [item('None', 'No GPU')] },
      forced_hyp: [],
      favourite_hyp: [],
      quota: applied.quota,
      restriction_applied: applied.restriction_applied,
      limits: hardwareLimits(applied),
    };
  });

  route(app, 'desktops.thumbnail', async (request, reply) => {
    const desktop = await desktopFor(request);
    if (!['started', 'waitingip', 'shutting-down'].includes(desktop.state))
      throw new ApiError('conflict', 'The desktop is not running', 'viewer_not_started', null, {
        status: 409,
      });
    let shot = app.idle.lastScreenshot(desktop.id);
    // Viewers attached means the screen changes: keep the thumbnail at most 3 s old.
    if (!shot || (app.idle.viewers(desktop.id) > 0 && Date.now() - shot.at.getTime() > 3000)) {
      shot = await app.idle.refreshScreenshot(desktop.id).catch(() => shot);
    }
    if (!shot) throw new ApiError('not_found', 'No screenshot yet', 'not_found');
    reply.header('Cache-Control', 'no-store').type('image/png');
    return shot.png;
  });

  route(app, 'desktops.images', async () =>
    Array.from({ length: 48 }, (_, i) => ({ id: String(i + 1), type: 'stock', url: '' })),
  );

  route(app, 'desktops.mediaInstalls', async () => [
    { id: 'generic', name: 'Generic x86-64', description: 'Any operating system', vers: '' },
  ]);

  route(app, 'desktops.checkQuota', async (request) => {
    await checkDesktopCreate(app.database.query, subjectOf(authOf(request)), 'desktops');
    return {};
  });

  route(app, 'desktops.recreateDisk', async (request) => {
    const desktop = await desktopFor(request);
    assertStateAllows('recreateDisk', desktop.state);
    const template = desktop.templateId ? await templateById(desktop.templateId) : undefined;
    if (!template?.diskPath)
      throw new ApiError(
        'precondition_required',
        'The desktop has no template disk to recreate from',
        'storage_has_no_parent',
      );
    const path = desktop.diskPath ?? app.engine.diskPath(desktop.id);
    await app.hypervisor.deleteDisk(path);
    await app.hypervisor.prepareDisk({ path, backingFile: template.diskPath });
    await app.desktops.update(desktop.id, { detail: null });
    return { task_id: randomUUID() };
  });

  route(app, 'desktops.abortOperations', async (request) => {
    const desktop = await desktopFor(request);
    if (desktop.state !== 'maintenance')
      throw new ApiError(
        'precondition_required',
        'No storage operation is running',
        'operation_not_owned',
      );
    await app.desktops.update(desktop.id, { state: 'stopped', currentAction: null }, [
      'maintenance',
    ]);
    return {};
  });

  route(app, 'desktops.viewer', async (request, reply) => {
    const auth = authOf(request);
    const { viewer } = request.params as { viewer: ViewerKey };
    const desktop = await desktopFor(request);
    if (!viewerKeys(desktop.guestProperties as Record<string, unknown>).includes(viewer))
      throw new ApiError(
        'not_found',
        `The desktop has no ${viewer} viewer`,
        'viewer_not_configured',
        { viewer },
      );
    assertStateAllows('viewer', desktop.state);
    const rt = desktop.runtime as {
      vncPort?: number;
      spicePort?: number;
      vncPassword?: string;
      spicePassword?: string;
    };
    if (!rt.vncPort || !rt.spicePort)
      throw new ApiError('conflict', 'The desktop is not running', 'viewer_not_started', null, {
        status: 409,
      });
    await app.desktops.update(desktop.id, { accessed: new Date() });
    reply.header('Cache-Control', 'no-store');
    if (viewer === 'browser-vnc') {
      const { ticket, expiresAt } = app.viewers.tickets.issue({
        userId: auth.userId,
        desktopId: desktop.id,
        protocol: 'vnc',
      });
      return {
        kind: 'browser',
        protocol: 'vnc',
        viewer: `/viewer/vnc/${desktop.id}`,
        url: `${VNC_WS_PATH}?ticket=${ticket}`,
        expires: Math.floor(expiresAt / 1000),
        values: { vmName: desktop.name, password: rt.vncPassword ?? '' },
      };
    }
    if (viewer === 'file-spice') {
      const host = (request.headers.host ?? `127.0.0.1:${app.config.port}`).replace(/:\d+$/, '');
      const port =
        Number((request.headers.host ?? '').split(':')[1] ?? app.config.port) || app.config.port;
      const gp = desktop.guestProperties as { fullscreen?: boolean };
      return {
        kind: 'file',
        protocol: 'spice',
        name: 'vdi-spice',
        ext: 'vv',
        mime: 'application/x-virt-viewer',
        content: spiceFile({
          desktopName: desktop.name,
          proxyHost: host,
          proxyPort: port,
          spiceHost: '127.0.0.1',
          spicePort: rt.spicePort,
          password: rt.spicePassword ?? '',
          fullscreen: gp.fullscreen === true,
        }),
      };
    }
    throw new ApiError(
      'precondition_required',
      'RDP viewers need the wireguard network, which is not enabled',
      'no_wireguard_keys',
      { viewer },
    );
  });
}
