/**
 * Card image uploads in the desktop create and update bodies: the picture is decoded and
 * re-encoded (a JPEG carrying a script comes out as plain WebP pixels), a small file declaring a
 * huge picture is refused from its header, only JPEG, PNG, GIF and WebP are accepted, and a
 * request that fails for any reason leaves the card directory and the desktop as they were.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32, deflateSync } from 'node:zlib';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildTestApp,
  createTestDatabase,
  expectErrorShape,
  injectWithToken,
  login,
  type TestApp,
} from '../../../test/support/helper.ts';
import { addDesktop, allDesktops, desktopRows, userRow } from '../../../test/support/fixtures.ts';
import { cardStorage } from './card-images.ts';

const DEMO_TEMPLATE_ID = 'demo-template';
const WEBP_MAGIC = (data: Buffer) =>
  data.subarray(0, 4).toString('latin1') === 'RIFF' &&
  data.subarray(8, 12).toString('latin1') === 'WEBP';

let t: TestApp;
let userToken: string;
let cardsDir: string;

const cardFiles = async () => (await readdir(cardsDir).catch(() => [] as string[])).sort();
const imageBody = (data: Buffer, filename = 'card.jpg') => ({
  type: 'user',
  file: { data: data.toString('base64'), filename },
});
const put = (id: string, payload: Record<string, unknown>) =>
  injectWithToken(t.app, userToken, { method: 'PUT', url: `/api/v3/domain/${id}`, payload });
const create = (payload: Record<string, unknown>) =>
  injectWithToken(t.app, userToken, {
    method: 'POST',
    url: '/api/v3/persistent_desktop',
    payload: { template_id: DEMO_TEMPLATE_ID, ...payload },
  });

/** A PNG chunk: length, type, data, CRC of type and data. */
const chunk = (type: string, data: Buffer) => {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
};

/** A ~1.9 kB PNG whose header declares 30000 × 30000 RGB pixels (2.7 GB once decoded). */
const pixelBomb = () => {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(30000, 0);
  ihdr.writeUInt32BE(30000, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(Buffer.alloc(1_900_000), { level: 9 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
};

/** A valid JPEG with a script in a comment segment and another one after its end marker. */
const polyglot = async () => {
  const jpeg = await sharp({
    create: { width: 64, height: 48, channels: 3, background: { r: 200, g: 30, b: 30 } },
  })
    .jpeg()
    .toBuffer();
  const script = Buffer.from('<script>alert(document.cookie)</script>', 'latin1');
  const comment = Buffer.alloc(4);
  comment.set([0xff, 0xfe], 0);
  comment.writeUInt16BE(script.length + 2, 2);
  return Buffer.concat([
    jpeg.subarray(0, 2),
    comment,
    script,
    jpeg.subarray(2),
    Buffer.from('<script>alert(1)</script>', 'latin1'),
  ]);
};

beforeAll(async () => {
  t = await buildTestApp(await createTestDatabase());
  userToken = await login(t.app, 'user');
  cardsDir = join(t.config.dataDir, 'cards');
});
afterAll(async () => t.close());

describe('card image uploads', () => {
  it('re-encodes a JPEG + script polyglot: the stored and served bytes are a plain WebP card', async () => {
    const id = await addDesktop(t.app, await userRow(t.app, 'user'), 'Polyglot card');
    const upload = await polyglot();
    expect(upload.includes('<script')).toBe(true);
    const res = await put(id, { image: imageBody(upload) });
    expect(res.statusCode, res.body).toBe(200);
    const image = res.json<{ image: { id: string; url: string; type: string } }>().image;
    expect(image.type).toBe('user');
    expect(image.id).toMatch(/^[A-Za-z0-9_-]{43}\.webp$/);
    expect((await t.app.desktops.byId(id))?.image).toEqual(image);

    const stored = await readFile(join(cardsDir, image.id));
    expect(stored.equals(upload)).toBe(false);
    expect(WEBP_MAGIC(stored)).toBe(true);
    expect(stored.includes('<script')).toBe(false);
    expect(stored.includes('alert')).toBe(false);
    const meta = await sharp(stored).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['webp', 640, 360]);

    const served = await t.app.inject({ method: 'GET', url: image.url });
    expect(served.statusCode).toBe(200);
    expect(served.headers['content-type']).toBe('image/webp');
    expect(served.headers['x-content-type-options']).toBe('nosniff');
    expect(served.rawPayload.equals(stored)).toBe(true);
  });

  it('accepts PNG, GIF and WebP pictures and stores them as WebP', async () => {
    const id = await addDesktop(t.app, await userRow(t.app, 'user'), 'Formats card');
    for (const format of ['png', 'gif', 'webp'] as const) {
      const picture = await sharp({
        create: { width: 40, height: 30, channels: 3, background: { r: 0, g: 90, b: 160 } },
      })
        .toFormat(format)
        .toBuffer();
      const res = await put(id, { image: imageBody(picture, `card.${format}`) });
      expect(res.statusCode, `${format}: ${res.body}`).toBe(200);
      const stored = await readFile(join(cardsDir, res.json<{ image: { id: string } }>().image.id));
      expect(WEBP_MAGIC(stored), format).toBe(true);
    }
  });

  it('a replaced or deleted card image leaves the disk once nothing shows it any more', async () => {
    const owner = await userRow(t.app, 'user');
    const id = await addDesktop(t.app, owner, 'Replaced card');
    const other = await addDesktop(t.app, owner, 'Sharing card');
    const picture = (r: number) =>
      sharp({ create: { width: 40, height: 30, channels: 3, background: { r, g: 10, b: 10 } } })
        .png()
        .toBuffer();
    const upload = async (r: number) => {
      const res = await put(id, { image: imageBody(await picture(r), 'card.png') });
      expect(res.statusCode, res.body).toBe(200);
      return res.json<{ image: { id: string; type: 'user'; url: string } }>().image;
    };
    const first = await upload(10);
    expect(await cardFiles()).toContain(first.id);
    const second = await upload(20);
    // replaced: the first card's file is gone
    expect(await cardFiles()).not.toContain(first.id);
    expect(await cardFiles()).toContain(second.id);
    // another desktop shows the second card too (made from the same image): it stays
    await t.app.desktops.table.update(other, { image: second });
    expect((await put(id, { image: { type: 'stock', id: '1' } })).statusCode).toBe(200);
    expect(await cardFiles()).toContain(second.id);
    // deleted: in the recycle bin it may come back; deleted for good, its file goes
    const del = await injectWithToken(t.app, userToken, {
      method: 'DELETE',
      url: `/api/v3/desktop/${other}`,
    });
    expect(del.statusCode, del.body).toBe(200);
    expect(await cardFiles()).toContain(second.id);
    const [entry] = await t.app.database.query<{ id: string }>(
      "SELECT id FROM recycle_bin WHERE item_name = 'Sharing card' AND status = 'recycled'",
    );
    await t.app.recycleBinService.purgeById(entry?.id ?? '');
    expect(await cardFiles()).not.toContain(second.id);
  });

  it('refuses a 1.9 kB PNG declaring 30000 × 30000 pixels with 400 and writes nothing', async () => {
    const id = await addDesktop(t.app, await userRow(t.app, 'user'), 'Bomb card');
    const bomb = pixelBomb();
    expect(bomb.length).toBeGreaterThan(1500);
    expect(bomb.length).toBeLessThan(2500);
    const files = await cardFiles();
    const row = await desktopRows(t.app, 'id = $1', [id]);
    const res = await put(id, { image: imageBody(bomb, 'bomb.png') });
    expect(res.statusCode, res.body).toBe(400);
    expectErrorShape(res.json(), 'bad_request');
    expect(res.json().description_code).toBe('card_image_too_many_pixels');
    expect(res.json().params).toMatchObject({ width: 30000, height: 30000 });
    expect(await cardFiles()).toEqual(files);
    expect(await desktopRows(t.app, 'id = $1', [id])).toEqual(row);
  });

  it('refuses other formats with 415 and undecodable pictures with 400, writing nothing', async () => {
    const id = await addDesktop(t.app, await userRow(t.app, 'user'), 'Refused card');
    const files = await cardFiles();
    const row = await desktopRows(t.app, 'id = $1', [id]);
    const tiff = await sharp({
      create: { width: 8, height: 8, channels: 3, background: { r: 1, g: 2, b: 3 } },
    })
      .tiff()
      .toBuffer();
    const unsupported = [
      Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>'),
      tiff,
      Buffer.from('BM' + 'x'.repeat(60), 'latin1'),
    ];
    for (const data of unsupported) {
      const res = await put(id, { image: imageBody(data, 'card.png') });
      expect(res.statusCode, res.body).toBe(415);
      expectErrorShape(res.json(), 'unsupported_media_type');
      expect(res.json().description_code).toBe('card_image_unsupported_format');
    }
    const broken = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(300, 7)]);
    const res = await put(id, { image: imageBody(broken) });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().description_code).toBe('card_image_invalid');
    expect(await cardFiles()).toEqual(files);
    expect(await desktopRows(t.app, 'id = $1', [id])).toEqual(row);
  });

  it('writes no card when a create fails on a duplicate name (409)', async () => {
    const owner = await userRow(t.app, 'user');
    await addDesktop(t.app, owner, 'Taken name');
    const picture = await polyglot();
    const files = await cardFiles();
    const desktops = await allDesktops(t.app);
    const res = await create({ name: 'Taken name', image: imageBody(picture) });
    expect(res.statusCode, res.body).toBe(409);
    expectErrorShape(res.json(), 'conflict');
    expect(res.json().description_code).toBe('new_desktop_name_exists');
    expect(await cardFiles()).toEqual(files);
    expect(await allDesktops(t.app)).toEqual(desktops);
  });

  it('a full disk during a card upload answers 507 insufficient_storage, leaves no file and the desktop unchanged (fault injected at the fs boundary)', async () => {
    const id = await addDesktop(t.app, await userRow(t.app, 'user'), 'Full disk card');
    const files = await cardFiles();
    const row = await desktopRows(t.app, 'id = $1', [id]);
    const everyDesktop = await allDesktops(t.app);
    const realWrite = cardStorage.writeFile;
    // The write stores part of the file and then fails as a full filesystem does.
    cardStorage.writeFile = (async (path: string, data: Buffer) => {
      await realWrite(path, data.subarray(0, 100));
      throw Object.assign(new Error('ENOSPC: no space left on device, write'), {
        code: 'ENOSPC',
      });
    }) as unknown as typeof realWrite;
    try {
      const edit = await put(id, { image: imageBody(await polyglot()) });
      expect(edit.statusCode, edit.body).toBe(507);
      expectErrorShape(edit.json(), 'insufficient_storage');
      expect(edit.json().description_code).toBe('storage_full');
      const made = await create({
        name: 'Created on a full disk',
        image: imageBody(await polyglot()),
      });
      expect(made.statusCode, made.body).toBe(507);
      expectErrorShape(made.json(), 'insufficient_storage');
    } finally {
      cardStorage.writeFile = realWrite;
    }
    expect(await cardFiles()).toEqual(files);
    expect(await desktopRows(t.app, 'id = $1', [id])).toEqual(row);
    expect(await allDesktops(t.app)).toEqual(everyDesktop);
  });

  it('writes no card when an edit fails on a duplicate name (409)', async () => {
    const owner = await userRow(t.app, 'user');
    await addDesktop(t.app, owner, 'Other name');
    const id = await addDesktop(t.app, owner, 'Edited name');
    const files = await cardFiles();
    const row = await desktopRows(t.app, 'id = $1', [id]);
    const res = await put(id, { name: 'Other name', image: imageBody(await polyglot()) });
    expect(res.statusCode, res.body).toBe(409);
    expect(await cardFiles()).toEqual(files);
    expect(await desktopRows(t.app, 'id = $1', [id])).toEqual(row);
  });

  it('stores exactly one card for two parallel creates of the same name', async () => {
    const files = await cardFiles();
    const picture = await polyglot();
    const answers = await Promise.all(
      [1, 2].map(() => create({ name: 'Twin create', image: imageBody(picture) })),
    );
    expect(answers.map((a) => a.statusCode).sort()).toEqual([200, 409]);
    const added = (await cardFiles()).filter((f) => !files.includes(f));
    expect(added).toHaveLength(1);
    const created = answers.find((a) => a.statusCode === 200)?.json<{ id: string }>();
    expect((await t.app.desktops.byId(created?.id ?? ''))?.image.id).toBe(added[0]);
  });
});
