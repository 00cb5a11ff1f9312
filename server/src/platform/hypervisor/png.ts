/**
 * Minimal PNG helpers (node:zlib only): decode 8-bit non-interlaced PNGs (what QEMU's `screendump`
 * writes), measure how "blank" a screen is, and encode a solid image (fake driver screenshots).
 */
import { deflateSync, inflateSync, crc32 } from 'node:zlib';

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

export interface DecodedPng {
  width: number;
  height: number;
  /** Samples per pixel (1 grey, 2 grey+alpha, 3 RGB, 4 RGBA). */
  channels: number;
  /** Unfiltered pixel rows, `width * channels` bytes each. */
  pixels: Buffer;
}

/** true when `data` starts with the PNG signature. */
export function isPng(data: Buffer): boolean {
  return data.length > 8 && data.subarray(0, 8).equals(SIGNATURE);
}

function paeth(a: number, b: number, c: number): number {
  const p = a + b - c;
  const pa = Math.abs(p - a);
  const pb = Math.abs(p - b);
  const pc = Math.abs(p - c);
  if (pa <= pb && pa <= pc) return a;
  return pb <= pc ? b : c;
}

/** Decode a PNG with bit depth 8, colour type 0/2/4/6, no interlace. Throws otherwise. */
export function decodePng(data: Buffer): DecodedPng {
  if (!isPng(data)) throw new Error('not a PNG');
  let offset = 8;
  let width = 0;
  let height = 0;
  let channels = 0;
  const idat: Buffer[] = [];
  while (offset + 8 <= data.length) {
    const length = data.readUInt32BE(offset);
    const type = data.toString('latin1', offset + 4, offset + 8);
    const body = data.subarray(offset + 8, offset + 8 + length);
    offset += 12 + length;
    if (type === 'IHDR') {
      width = body.readUInt32BE(0);
      height = body.readUInt32BE(4);
      const depth = body[8];
      const colorType = body[9];
      const interlace = body[12];
      const map: Record<number, number> = { 0: 1, 2: 3, 4: 2, 6: 4 };
      const ch = colorType === undefined ? undefined : map[colorType];
      if (depth !== 8 || ch === undefined || interlace !== 0) {
        throw new Error(
          `unsupported PNG (depth ${String(depth)}, colour type ${String(colorType)}, interlace ${String(interlace)})`,
        );
      }
      channels = ch;
    } else if (type === 'IDAT') {
      idat.push(body);
    } else if (type === 'IEND') {
      break;
    }
  }
  if (!width || !height || !channels) throw new Error('PNG without IHDR');
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  if (raw.length < height * (stride + 1)) throw new Error('truncated PNG data');
  const pixels = Buffer.alloc(height * stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const src = y * (stride + 1) + 1;
    const dst = y * stride;
    for (let x = 0; x < stride; x++) {
      const value = raw[src + x] ?? 0;
      const left = x >= channels ? (pixels[dst + x - channels] ?? 0) : 0;
      const up = y > 0 ? (pixels[dst - stride + x] ?? 0) : 0;
      const upLeft = y > 0 && x >= channels ? (pixels[dst - stride + x - channels] ?? 0) : 0;
      let out: number;
      switch (filter) {
        case 0:
          out = value;
          break;
        case 1:
          out = value + left;
          break;
        case 2:
          out = value + up;
          break;
        case 3:
          out = value + ((left + up) >> 1);
          break;
        case 4:
          out = value + paeth(left, up, upLeft);
          break;
        default:
          throw new Error(`bad PNG filter ${String(filter)}`);
      }
      pixels[dst + x] = out & 0xff;
    }
  }
  return { width, height, channels, pixels };
}

export interface ScreenStats {
  width: number;
  height: number;
  /** Number of distinct colours (capped at 1025: "more than 1024"). */
  colours: number;
  /** Fraction (0..1) of pixels that differ from the most common colour. */
  foreground: number;
}

/** Colour statistics of a PNG screen (alpha ignored). */
export function screenStats(data: Buffer): ScreenStats {
  const { width, height, channels, pixels } = decodePng(data);
  const counts = new Map<number, number>();
  const colourChannels = Math.min(channels, 3);
  for (let i = 0; i < pixels.length; i += channels) {
    let key = 0;
    for (let c = 0; c < colourChannels; c++) key = key * 256 + (pixels[i + c] ?? 0);
    const n = counts.get(key);
    if (n !== undefined) counts.set(key, n + 1);
    else if (counts.size <= 1024) counts.set(key, 1);
  }
  let top = 0;
  for (const n of counts.values()) top = Math.max(top, n);
  const total = width * height;
  return { width, height, colours: counts.size, foreground: total ? (total - top) / total : 0 };
}

/**
 * true when the screen shows (almost) nothing: one colour, or fewer than `threshold` (default 0.2 %)
 * of the pixels differ from the background. A BIOS line of text is above that; a black screen is not.
 */
export function isBlankScreen(data: Buffer, threshold = 0.002): boolean {
  const stats = screenStats(data);
  return stats.colours <= 1 || stats.foreground < threshold;
}

function chunk(type: string, body: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(body.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), body])) >>> 0, 0);
  return Buffer.concat([head, body, crc]);
}

/** Encode an RGB image (`pixels` = width*height*3 bytes, or a solid colour when omitted). */
export function encodePng(
  width: number,
  height: number,
  pixels?: Buffer,
  colour: [number, number, number] = [0, 0, 0],
): Buffer {
  const stride = width * 3;
  const raw = Buffer.alloc(height * (stride + 1));
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      for (let c = 0; c < 3; c++) {
        raw[y * (stride + 1) + 1 + x * 3 + c] = pixels
          ? (pixels[y * stride + x * 3 + c] ?? 0)
          : (colour[c] ?? 0);
      }
    }
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8;
  ihdr[9] = 2;
  return Buffer.concat([
    SIGNATURE,
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/**
 * A binary PPM (`P6`, 8 bits per sample: what QEMU's `screendump` writes by default and libvirt
 * passes on for older QEMUs) as a PNG. Throws on any other format.
 */
export function ppmToPng(data: Buffer): Buffer {
  // Header: "P6", width, height, maxval, separated by whitespace (and `#` comments), then one byte.
  let pos = 0;
  const fields: number[] = [];
  if (data.toString('latin1', 0, 2) !== 'P6') throw new Error('not a binary PPM (P6)');
  pos = 2;
  while (fields.length < 3) {
    while (pos < data.length && /\s/.test(String.fromCharCode(data[pos] ?? 0))) pos++;
    if (data[pos] === 0x23) {
      while (pos < data.length && data[pos] !== 0x0a) pos++;
      continue;
    }
    const start = pos;
    while (pos < data.length && /\d/.test(String.fromCharCode(data[pos] ?? 0))) pos++;
    if (pos === start) throw new Error('truncated PPM header');
    fields.push(Number(data.toString('latin1', start, pos)));
  }
  pos++; // the single whitespace byte before the pixels
  const [width = 0, height = 0, maxval = 0] = fields;
  if (maxval !== 255) throw new Error(`unsupported PPM maxval ${maxval}`);
  const pixels = data.subarray(pos, pos + width * height * 3);
  if (pixels.length !== width * height * 3) throw new Error('truncated PPM pixels');
  return encodePng(width, height, pixels);
}
