/**
 * Prepare the demo images from the Debian package `grub-rescue-pc`:
 *   <DATA_DIR>/images/demo-template.qcow2   (grub-rescue-usb.img converted to qcow2: template disk)
 *   <DATA_DIR>/images/demo.iso              (grub-rescue-cdrom.iso: demo CD media)
 *   <DATA_DIR>/images/demo-floppy.img       (grub-rescue-floppy.img: demo floppy media)
 * Idempotent: existing files are kept (a few ms when everything exists). Files are written to a
 * temporary name and renamed, so an interrupted run never leaves a half file behind.
 *
 * CLI: npx tsx server/src/platform/hypervisor/demo-images.ts [--data-dir DIR] [--force]
 * (DATA_DIR defaults to $DATA_DIR, then ./data)
 */
import { execFile } from 'node:child_process';
import { existsSync, promises as fsp } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

export const GRUB_RESCUE_DIR = '/usr/lib/grub-rescue';

export interface DemoImages {
  /** qcow2 template disk (boots to the GRUB menu). */
  template: string;
  /** bootable CD ISO. */
  iso: string;
  /** bootable floppy image (raw). */
  floppy: string;
}

export interface PrepareDemoImagesOptions {
  dataDir: string;
  /** Where grub-rescue-pc's files are. Default /usr/lib/grub-rescue. */
  sourceDir?: string;
  /** Default `qemu-img`. */
  qemuImg?: string;
  /** Rebuild even if the files exist. */
  force?: boolean;
  /** Progress lines (default: silent). */
  log?: (line: string) => void;
}

/** Thrown when grub-rescue-pc (or qemu-img) is missing. */
export class DemoImagesUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DemoImagesUnavailableError';
  }
}

/** Paths of the demo images under a data dir (no I/O). */
export function demoImagePaths(dataDir: string): DemoImages {
  const dir = path.join(path.resolve(dataDir), 'images');
  return {
    template: path.join(dir, 'demo-template.qcow2'),
    iso: path.join(dir, 'demo.iso'),
    floppy: path.join(dir, 'demo-floppy.img'),
  };
}

/** Create the demo images if missing; returns their absolute paths. */
export async function prepareDemoImages(options: PrepareDemoImagesOptions): Promise<DemoImages> {
  const sourceDir = options.sourceDir ?? GRUB_RESCUE_DIR;
  const qemuImg = options.qemuImg ?? 'qemu-img';
  const log = options.log ?? (() => undefined);
  const out = demoImagePaths(options.dataDir);
  const src = {
    usb: path.join(sourceDir, 'grub-rescue-usb.img'),
    iso: path.join(sourceDir, 'grub-rescue-cdrom.iso'),
    floppy: path.join(sourceDir, 'grub-rescue-floppy.img'),
  };
  const needed = {
    template: options.force === true || !existsSync(out.template),
    iso: options.force === true || !existsSync(out.iso),
    floppy: options.force === true || !existsSync(out.floppy),
  };
  if (!needed.template && !needed.iso && !needed.floppy) {
    log(`demo images already present in ${path.dirname(out.template)}`);
    return out;
  }
  const missing = Object.values(src).filter((f) => !existsSync(f));
  if (missing.length > 0) {
    throw new DemoImagesUnavailableError(
      `grub-rescue-pc is not installed (missing ${missing.join(', ')}). Install it with: apt-get install grub-rescue-pc qemu-utils`,
    );
  }
  await fsp.mkdir(path.dirname(out.template), { recursive: true });
  const tmp = (file: string) => `${file}.tmp-${process.pid}`;

  if (needed.template) {
    try {
      await execFileAsync(qemuImg, [
        'convert',
        '-q',
        '-f',
        'raw',
        '-O',
        'qcow2',
        src.usb,
        tmp(out.template),
      ]);
    } catch (error) {
      await fsp.rm(tmp(out.template), { force: true });
      const code =
        typeof error === 'object' && error !== null && 'code' in error ? error.code : undefined;
      if (code === 'ENOENT')
        throw new DemoImagesUnavailableError(
          `${qemuImg} not found. Install it with: apt-get install qemu-utils`,
        );
      throw error;
    }
    await fsp.rename(tmp(out.template), out.template);
    log(`created ${out.template}`);
  }
  for (const key of ['iso', 'floppy'] as const) {
    if (!needed[key]) continue;
    await fsp.copyFile(src[key], tmp(out[key]));
    await fsp.chmod(tmp(out[key]), 0o644);
    await fsp.rename(tmp(out[key]), out[key]);
    log(`created ${out[key]}`);
  }
  return out;
}

async function main(argv: string[]): Promise<number> {
  let dataDir = process.env.DATA_DIR ?? './data';
  let force = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--data-dir') {
      const value = argv[++i];
      if (!value) {
        console.error('--data-dir needs a value');
        return 2;
      }
      dataDir = value;
    } else if (arg?.startsWith('--data-dir=')) {
      dataDir = arg.slice('--data-dir='.length);
    } else if (arg === '--force') {
      force = true;
    } else if (arg === '--help' || arg === '-h') {
      console.log(
        'usage: npx tsx server/src/platform/hypervisor/demo-images.ts [--data-dir DIR] [--force]',
      );
      return 0;
    } else {
      console.error(`unknown argument ${String(arg)}`);
      return 2;
    }
  }
  try {
    const images = await prepareDemoImages({ dataDir, force, log: (line) => console.log(line) });
    console.log(
      `template: ${images.template}\niso:      ${images.iso}\nfloppy:   ${images.floppy}`,
    );
    return 0;
  } catch (error) {
    if (error instanceof DemoImagesUnavailableError) {
      console.error(`prepare-demo-images: ${error.message}`);
      return 3;
    }
    console.error(error);
    return 1;
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = await main(process.argv.slice(2));
}
