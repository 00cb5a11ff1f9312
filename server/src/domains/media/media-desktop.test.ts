/**
 * New desktop from media (POST /desktop/from/media) against real QEMU (TCG): a medium downloaded
 * for real, a desktop with an empty disk of the chosen size and the ISO attached, started once:
 * QEMU boots it from the CD (boot order and drive on its command line) and the ISO's GRUB menu is
 * on its screen (the empty disk has nothing to boot). Also the create's checks and its quota race.
 */
import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { desktops, media } from '../../platform/db/schema.ts';
import { decodePng } from '../../platform/hypervisor/png.ts';
import { killTracked, trackPid } from '../../platform/hypervisor/test-support.ts';
import {
  buildTestApp,
  createTestDatabase,
  expectErrorShape,
  injectWithToken,
  login,
  type TestApp,
} from '../../../test/support/helper.ts';
import { addMedia, addUser, loginTo, userRow } from '../../../test/support/fixtures.ts';
import { startMediaSource, type MediaSource } from '../../../test/support/media-source.ts';
import { untilWithin } from '../../../test/support/wait.ts';

const until = untilWithin(30_000);

/**
 * True when the screen shows a menu's highlight bar: a pixel row lit across most of the width
 * (GRUB's selected entry). The firmware's "No bootable device" text screen never has one.
 */
function showsMenuBar(png: Buffer): boolean {
  const { width, height, channels, pixels } = decodePng(png);
  const stride = width * channels;
  for (let y = 0; y < height; y++) {
    let lit = 0;
    for (let x = 0; x < width; x++) if ((pixels[y * stride + x * channels] ?? 0) > 96) lit++;
    if (lit > width * 0.6) return true;
  }
  return false;
}

let t: TestApp;
let source: MediaSource;
let token: string;
let mediaId: string;
/** The desktop the first test leaves running on the medium. */
let bootedId = '';

beforeAll(async () => {
  source = await startMediaSource();
  t = await buildTestApp(await createTestDatabase(), { mediaAllowedHosts: [source.host] });
  token = await login(t.app, 'advanced');
  const res = await injectWithToken(t.app, token, {
    method: 'POST',
    url: '/api/v3/media',
    payload: { name: 'GRUB rescue', kind: 'iso', url: source.url('/grub.iso') },
  });
  expect(res.statusCode, res.body).toBe(200);
  const [row] = await t.app.media.list({ where: eq(media.name, 'GRUB rescue') });
  mediaId = row?.id ?? '';
  await until(
    async () => (await t.app.media.get(mediaId))?.status,
    (s) => s === 'downloaded',
  );
});
afterAll(async () => {
  for (const d of await t.app.db.select().from(desktops))
    await t.app.hypervisor.stop(d.id).catch(() => undefined);
  await t.close();
  await source.close();
  killTracked();
});

const fromMedia = (body: Record<string, unknown>, as = token) =>
  injectWithToken(t.app, as, { method: 'POST', url: '/api/v3/desktop/from/media', payload: body });

describe('new desktop from media', () => {
  it('makes an empty disk with the ISO attached, and the desktop boots the ISO under QEMU', async () => {
    const res = await fromMedia({
      media_id: mediaId,
      name: 'From the GRUB ISO',
      hardware: { memory: 0.5, vcpus: 1, disk_size: 2 },
    });
    expect(res.statusCode, res.body).toBe(200);
    const { id } = res.json<{ id: string }>();
    await until(
      async () => (await t.app.desktops.byId(id))?.state,
      (s) => s === 'stopped',
    );
    const row = await t.app.desktops.byId(id);
    expect(row).toMatchObject({ templateId: null, type: 'persistent' });
    expect(row?.hardware).toMatchObject({
      isos: [{ id: mediaId }],
      boot_order: ['iso', 'disk'],
      disk_size: 2,
    });
    const disk = await t.app.hypervisor.diskInfo(row?.diskPath ?? '');
    expect(disk).toMatchObject({ virtualSize: 2 * 2 ** 30, backingFile: null });

    const start = await injectWithToken(t.app, token, {
      method: 'GET',
      url: `/api/v3/desktop/start/${id}`,
    });
    expect(start.statusCode, start.body).toBe(200);
    await until(
      async () => (await t.app.desktops.byId(id))?.state,
      (s) => s === 'started',
    );
    const pid = Number((await t.app.desktops.byId(id))?.runtime.pid);
    trackPid(pid);
    const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    expect(args[args.indexOf('-boot') + 1]).toBe('order=dc');
    const iso = (await t.app.media.get(mediaId))?.path ?? '';
    expect(args.some((a) => a.includes(`file=${iso}`) && a.includes('media=cdrom'))).toBe(true);

    const shot = await until(
      () => t.app.hypervisor.screenshot(id),
      (png) => showsMenuBar(png),
      45_000,
    );
    expect(showsMenuBar(shot)).toBe(true);
    bootedId = id;
  });

  it('refuses what a desktop may not be made of, storing nothing', async () => {
    const owner = await userRow(t.app, 'advanced');
    await addMedia(t.app, owner, { id: 'still-downloading', kind: 'iso', status: 'downloading' });
    await addMedia(t.app, owner, { id: 'a-floppy', kind: 'floppy' });
    const before = (await t.app.db.select().from(desktops)).length;
    const cases: [Record<string, unknown>, number, string][] = [
      [{ media_id: 'no-such-media', name: 'Unknown media' }, 404, 'not_found'],
      [{ media_id: mediaId, name: 'Unknown install', xml_id: 'win10Virtio' }, 404, 'not_found'],
      [{ media_id: 'still-downloading', name: 'Not downloaded' }, 428, 'media_not_downloaded'],
      [{ media_id: mediaId, kind: 'floppy', name: 'ISO as floppy' }, 400, 'media_invalid'],
      [{ media_id: 'a-floppy', name: 'Floppy as ISO' }, 400, 'media_invalid'],
      [{ media_id: mediaId, name: 'From the GRUB ISO' }, 409, 'new_desktop_name_exists'],
      [
        {
          media_id: mediaId,
          name: 'With RDP',
          guest_properties: { viewers: { browser_rdp: { options: null } } },
        },
        400,
        'viewer_needs_wireguard',
      ],
      [
        { media_id: mediaId, name: 'Too much memory', hardware: { memory: 129 } },
        400,
        'bad_request',
      ],
      [{ media_id: mediaId, name: 'x' }, 400, 'bad_request'],
    ];
    for (const [body, status, code] of cases) {
      const res = await fromMedia(body);
      expect([body.name, res.statusCode]).toEqual([body.name, status]);
      expect([body.name, res.json<{ description_code: string }>().description_code]).toEqual([
        body.name,
        code,
      ]);
    }
    expect((await t.app.db.select().from(desktops)).length).toBe(before);
  });

  it('uses a medium shared with everybody (the demo ISO) but not one shared with nobody', async () => {
    const shared = await fromMedia({ media_id: 'demo-iso', name: 'From the demo ISO' });
    expect(shared.statusCode, shared.body).toBe(200);
    const owner = await userRow(t.app, 'admin');
    await addMedia(t.app, owner, { id: 'admin-private', kind: 'iso' });
    const refused = await fromMedia({ media_id: 'admin-private', name: 'From a private ISO' });
    expect(refused.statusCode).toBe(403);
    expectErrorShape(refused.json(), 'forbidden');
    expect(refused.json()).toMatchObject({ description_code: 'media_not_allowed' });
  });

  it('deleting the medium stops the desktop running with it and takes it out of its hardware', async () => {
    expect((await t.app.desktops.byId(bootedId))?.state).toBe('started');
    const file = (await t.app.media.get(mediaId))?.path ?? '';
    const res = await injectWithToken(t.app, token, {
      method: 'DELETE',
      url: `/api/v3/media/${mediaId}`,
    });
    expect(res.statusCode, res.body).toBe(200);
    const desktop = await t.app.desktops.byId(bootedId);
    expect(desktop?.state).toBe('stopped');
    expect(desktop?.hardware.isos).toEqual([]);
    expect(await t.app.hypervisor.status(bootedId)).toBe('absent');
    expect(existsSync(file)).toBe(false);
    expect((await t.app.media.get(mediaId))?.status).toBe('deleted');
  });

  it('admits exactly one of 10 parallel creates on the last desktop quota unit', async () => {
    const owner = await addUser(t.app, {
      username: 'one-desktop-left',
      role: 'advanced',
      categoryId: 'default',
      groupId: 'default-advanced',
    });
    await t.app.users.update(owner.id, { quota: { desktops: 1 } });
    const as = await loginTo(t.app, 'one-desktop-left', 'default');
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        fromMedia({ media_id: 'demo-iso', name: `Race ${i}` }, as),
      ),
    );
    const statuses = results.map((r) => r.statusCode).sort();
    expect(statuses).toEqual([200, ...Array<number>(9).fill(428)]);
    for (const r of results.filter((x) => x.statusCode === 428))
      expect(r.json()).toMatchObject({ description_code: 'desktop_new_user_quota_exceeded' });
    expect(
      await t.app.db.select().from(desktops).where(eq(desktops.userId, owner.id)),
    ).toHaveLength(1);
  });
});
