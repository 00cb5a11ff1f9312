/**
 * Card images uploaded as base64 in the desktop create and update bodies.
 *
 * An upload is at most 3 MiB of base64-decoded bytes, a JPEG, PNG, GIF or WebP by its magic bytes
 * and by its decoded header (anything else: 415). Its size in pixels is read from the header before
 * anything is decoded and must stay within 4096 × 4096 and 16 megapixels (400 otherwise), so a
 * small file declaring a huge picture is refused without allocating it. It is then decoded (first
 * frame only) and re-encoded as a 640 × 360 WebP, the card's 16:9 cover crop, without metadata:
 * what is stored and served is pixels, never bytes of the upload.
 *
 * Files live under DATA_DIR/cards with a random 256-bit name (the client's file name is ignored)
 * and are served with their image type and nosniff. Nothing is written while the request can still
 * fail: prepareCardImage() validates and encodes in memory, the caller stores the file with
 * write() once its database checks have passed, and remove() deletes it again when the database
 * write that needed it fails. A full disk answers 507 insufficient_storage and leaves no file.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ApiError } from '../../platform/http/api-error.ts';
import { isStorageFull, storageFullError } from '../../platform/lib/storage-errors.ts';
import type { Query } from '../../platform/db/client.ts';

/**
 * The filesystem calls that store a card, in one object so a fault-injection test can make them
 * fail as a full disk would (the route and everything around it stay real).
 */
export const cardStorage = { mkdir, writeFile };

export const MAX_CARD_BYTES = 3 * 1024 * 1024;
/** Largest side of an uploaded picture, in pixels. */
export const MAX_CARD_SIDE = 4096;
/** Largest uploaded picture, in pixels (16 megapixels). */
export const MAX_CARD_PIXELS = 16_000_000;
/** The stored card: 16:9, the ratio cards are drawn at. */
export const CARD_WIDTH = 640;
export const CARD_HEIGHT = 360;

const FILE_PATTERN = /^[A-Za-z0-9_-]{43}\.(png|jpg|gif|webp)$/;

/** Magic bytes at an offset. */
type Signature = readonly (readonly [offset: number, bytes: readonly number[]])[];

const FORMATS = [
  {
    format: 'png',
    mime: 'image/png',
    signature: [[0, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]]],
  },
  { format: 'jpeg', mime: 'image/jpeg', signature: [[0, [0xff, 0xd8, 0xff]]] },
  { format: 'gif', mime: 'image/gif', signature: [[0, [0x47, 0x49, 0x46, 0x38]]] },
  {
    format: 'webp',
    mime: 'image/webp',
    signature: [
      [0, [0x52, 0x49, 0x46, 0x46]],
      [8, [0x57, 0x45, 0x42, 0x50]],
    ],
  },
] as const satisfies readonly { format: string; mime: string; signature: Signature }[];

type Format = (typeof FORMATS)[number];

/** The format of an image buffer by its first bytes, or undefined. */
export function detectFormat(data: Buffer): Format | undefined {
  return FORMATS.find((f) =>
    f.signature.every(([offset, bytes]) => bytes.every((b, i) => data[offset + i] === b)),
  );
}

const unsupported = () =>
  new ApiError(
    'unsupported_media_type',
    'Only JPEG, PNG, GIF and WebP images are accepted',
    'card_image_unsupported_format',
    { formats: FORMATS.map((f) => f.format) },
  );

const undecodable = () =>
  new ApiError('bad_request', 'The image can not be decoded', 'card_image_invalid', null, {
    errors: { '/image/file/data': 'card_image_invalid' },
  });

/** An encoded card, not stored yet. */
export interface PreparedCard {
  /** The image object of the desktop once the card is stored. */
  image: { id: string; type: 'user'; url: string };
  /** Stores the encoded file (never over an existing one). */
  write(): Promise<void>;
  /** Deletes the file if write() stored it; safe to call in any case. */
  remove(): Promise<void>;
}

/** Checks, decodes and re-encodes a base64 card image in memory; writes nothing. */
export async function prepareCardImage(dataDir: string, base64: string): Promise<PreparedCard> {
  if (!/^[A-Za-z0-9+/=\s]*$/.test(base64))
    throw new ApiError('bad_request', 'The image is not base64', 'bad_request', null, {
      errors: { '/image/file/data': 'contentEncoding' },
    });
  const data = Buffer.from(base64, 'base64');
  if (data.length === 0 || data.length > MAX_CARD_BYTES)
    throw new ApiError(
      'bad_request',
      `The image must be between 1 byte and ${MAX_CARD_BYTES} bytes`,
      'card_image_too_large',
      { max: MAX_CARD_BYTES },
    );
  const format = detectFormat(data);
  if (!format) throw unsupported();
  // libvips is loaded at the first upload, not at boot: it adds about 20 MB to an idle server.
  const { default: sharp } = await import('sharp');
  // The header only: libvips reads the dimensions without decoding the pixels.
  const meta = await sharp(data, { limitInputPixels: false, failOn: 'error' })
    .metadata()
    .catch(() => {
      throw undecodable();
    });
  if (meta.format !== format.format) throw unsupported();
  const width = meta.width;
  const height = meta.pageHeight ?? meta.height;
  if (!width || !height) throw undecodable();
  if (width > MAX_CARD_SIDE || height > MAX_CARD_SIDE || width * height > MAX_CARD_PIXELS)
    throw new ApiError(
      'bad_request',
      `The image may be at most ${MAX_CARD_SIDE} × ${MAX_CARD_SIDE} pixels and ${MAX_CARD_PIXELS} pixels in all (it is ${width} × ${height})`,
      'card_image_too_many_pixels',
      { width, height, max_side: MAX_CARD_SIDE, max_pixels: MAX_CARD_PIXELS },
      { errors: { '/image/file/data': 'card_image_too_many_pixels' } },
    );
  const encoded = await sharp(data, {
    limitInputPixels: MAX_CARD_PIXELS,
    failOn: 'error',
    pages: 1,
    autoOrient: true,
  })
    .resize(CARD_WIDTH, CARD_HEIGHT, { fit: 'cover' })
    .webp({ quality: 80 })
    .toBuffer()
    .catch(() => {
      throw undecodable();
    });
  const file = `${randomBytes(32).toString('base64url')}.webp`;
  const dir = join(dataDir, 'cards');
  const path = join(dir, file);
  let written = false;
  return {
    image: { id: file, type: 'user', url: `/api/v3/images/desktops/user/${file}` },
    async write() {
      try {
        await cardStorage.mkdir(dir, { recursive: true });
        await cardStorage.writeFile(path, encoded, { mode: 0o644, flag: 'wx' });
      } catch (err) {
        // A full disk may leave part of the file: nothing of a failed write stays behind.
        if (isStorageFull(err)) {
          await unlink(path).catch(() => undefined);
          throw storageFullError();
        }
        throw err;
      }
      written = true;
    },
    async remove() {
      if (!written) return;
      written = false;
      await unlink(path).catch(() => undefined);
    },
  };
}

/** Reads a stored card image by its (validated) file name. */
export async function readCardImage(
  dataDir: string,
  file: string,
): Promise<{ data: Buffer; mime: string }> {
  if (!FILE_PATTERN.test(file)) throw new ApiError('not_found', 'Image not found', 'not_found');
  const data = await readFile(join(dataDir, 'cards', file)).catch(() => undefined);
  const format = data ? detectFormat(data) : undefined;
  if (!data || !format) throw new ApiError('not_found', 'Image not found', 'not_found');
  return { data, mime: format.mime };
}

/**
 * The uploaded card files of some images that nothing refers to any more are removed: a card is
 * shared by what was made from its holder (a desktop made from a template, a deployment's
 * desktops), so a replaced or deleted image's file goes only once no desktop, template or
 * deployment shows it and no recycled item could bring it back. Stock cards have no file.
 */
export async function releaseCardImages(
  dataDir: string,
  query: Query,
  images: readonly unknown[],
): Promise<void> {
  const files = new Set<string>();
  for (const image of images) {
    const { type, id } = (image ?? {}) as { type?: unknown; id?: unknown };
    if (type === 'user' && typeof id === 'string' && FILE_PATTERN.test(id)) files.add(id);
  }
  for (const file of files) {
    const [row] = await query<{ n: string }>(
      `SELECT (SELECT count(*) FROM desktops WHERE image->>'id' = $1)
            + (SELECT count(*) FROM templates WHERE image->>'id' = $1)
            + (SELECT count(*) FROM deployments WHERE create_dict->'image'->>'id' = $1)
            + (SELECT count(*) FROM recycle_bin WHERE status = 'recycled' AND strpos(data::text, $1) > 0)
            AS n`,
      [file],
    );
    if (Number(row?.n ?? 1) === 0)
      await unlink(join(dataDir, 'cards', file)).catch(() => undefined);
  }
}
