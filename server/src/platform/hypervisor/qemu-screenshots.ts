/**
 * Screenshots of a running QEMU domain: QMP `screendump` writes a PNG into the run directory, which
 * is read back and removed. The files are named so that a run directory's clean-up finds leftovers.
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';

/** The name every screendump file starts with. */
export const SCREENDUMP_PREFIX = 'screendump-';

/**
 * A PNG of the domain's screen.
 * @param runDir the domain's run directory
 * @param seq a number unique among this domain's screenshots
 * @param screendump runs QMP `screendump` into the given file
 */
export async function takeScreenshot(
  runDir: string,
  seq: number,
  screendump: (file: string) => Promise<unknown>,
): Promise<Buffer> {
  const file = path.join(runDir, `${SCREENDUMP_PREFIX}${process.pid}-${seq}.png`);
  try {
    await screendump(file);
    return await fsp.readFile(file);
  } finally {
    await fsp.rm(file, { force: true });
  }
}
