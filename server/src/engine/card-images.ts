/**
 * Card images uploaded as base64 in PUT /domain/{id} (reference 3.11): decoded, checked by magic
 * bytes (PNG, JPEG or GIF only), size-capped, stored under DATA_DIR/cards with a random name (the
 * client's file name is ignored: no path traversal) and served with nosniff. Not re-encoded (no
 * image library in the stack yet): the served type always matches the detected format.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ApiError } from '../lib/api-error.ts';

export const MAX_CARD_BYTES = 3 * 1024 * 1024;
const FILE_PATTERN = /^[A-Za-z0-9_-]{43}\.(png|jpg|gif)$/;

const FORMATS = [
  { ext: 'png', mime: 'image/png', magic: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a] },
  { ext: 'jpg', mime: 'image/jpeg', magic: [0xff, 0xd8, 0xff] },
  { ext: 'gif', mime: 'image/gif', magic: [0x47, 0x49, 0x46, 0x38] },
] as const;

/** The format of an image buffer by its first bytes, or undefined. */
export function detectFormat(data: Buffer): (typeof FORMATS)[number] | undefined {
  return FORMATS.find((f) => f.magic.every((b, i) => data[i] === b));
}

/** Stores a base64 card image; returns the image object for the desktop. */
export async function saveCardImage(
  dataDir: string,
  base64: string,
): Promise<{ id: string; type: 'user'; url: string }> {
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
  if (!format)
    throw new ApiError(
      'unsupported_media_type',
      'Only PNG, JPEG and GIF images are accepted',
      'card_image_invalid',
    );
  const file = `${randomBytes(32).toString('base64url')}.${format.ext}`;
  const dir = join(dataDir, 'cards');
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, file), data, { mode: 0o644 });
  return { id: file, type: 'user', url: `/api/v3/images/desktops/user/${file}` };
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
