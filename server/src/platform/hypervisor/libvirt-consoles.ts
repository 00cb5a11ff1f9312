/**
 * The console operations of the libvirt driver: a screenshot (`virsh screenshot`, PPM made PNG when
 * the host gives PPM) and new console passwords on a running domain (`update-device --live` of its
 * graphics element, with an end time when the password is to expire).
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { errorMessage } from './host-process.ts';
import type { LibvirtMonitor } from './libvirt-domains.ts';
import { graphicsElement, withPassword } from './libvirt-xml.ts';
import { isPng, ppmToPng } from './png.ts';
import { HypervisorError } from './types.ts';

/** What the console operations need of the driver. */
export interface ConsoleCommands {
  monitorOf(id: string): LibvirtMonitor;
  /** Runs a command about a running domain; rejects `not_running` when it is not. */
  command(
    id: string,
    args: (name: string) => string[],
    timeoutMs?: number,
  ): Promise<{ monitor: LibvirtMonitor; output: string }>;
}

export async function takeScreenshot(driver: ConsoleCommands, id: string): Promise<Buffer> {
  const monitor = driver.monitorOf(id);
  const file = path.join(
    monitor.runtime.runDir,
    `screendump-${process.pid}-${++monitor.screenshotSeq}.img`,
  );
  try {
    await driver.command(id, (name) => ['screenshot', name, '--file', file], 15_000);
    const data = await fsp.readFile(file);
    if (isPng(data)) return data;
    try {
      return ppmToPng(data);
    } catch (error) {
      throw new HypervisorError('command_failed', `screenshot of ${id}: ${errorMessage(error)}`);
    }
  } finally {
    await fsp.rm(file, { force: true });
  }
}

export async function updatePasswords(
  driver: ConsoleCommands,
  id: string,
  passwords: { vnc?: string; spice?: string },
  options: { validForSeconds?: number } = {},
): Promise<void> {
  const { validForSeconds } = options;
  if (validForSeconds !== undefined && !(Number.isInteger(validForSeconds) && validForSeconds > 0))
    throw new HypervisorError('invalid_spec', 'validForSeconds must be a positive integer');
  if (passwords.vnc !== undefined && !passwords.vnc)
    throw new HypervisorError('invalid_spec', 'empty VNC password');
  if (passwords.spice !== undefined && !passwords.spice)
    throw new HypervisorError('invalid_spec', 'empty SPICE password');
  const { monitor, output } = await driver.command(id, (name) => [
    'dumpxml',
    '--security-info',
    name,
  ]);
  const changes: ['vnc' | 'spice', string][] = [];
  if (passwords.vnc !== undefined) changes.push(['vnc', passwords.vnc.slice(0, 8)]);
  if (passwords.spice !== undefined) changes.push(['spice', passwords.spice]);
  for (const [type, password] of changes) {
    const element = graphicsElement(output, type);
    if (!element)
      throw new HypervisorError('command_failed', `domain ${id} has no ${type} console`);
    // libvirt takes an end time in whole seconds: counted from the nearest second, it is never
    // already over when libvirt gets it a few milliseconds later (from the current second it
    // could be, at the turn of a second, with one second asked).
    const validTo =
      validForSeconds === undefined
        ? undefined
        : new Date((Math.round(Date.now() / 1000) + validForSeconds) * 1000);
    const file = path.join(monitor.runtime.runDir, `graphics-${type}.xml`);
    await fsp.writeFile(file, withPassword(element, password, validTo), { mode: 0o600 });
    try {
      await driver.command(id, (name) => ['update-device', name, file, '--live']);
    } finally {
      await fsp.rm(file, { force: true });
    }
  }
}
