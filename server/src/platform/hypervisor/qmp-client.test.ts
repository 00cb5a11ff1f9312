import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  connectQmp,
  QmpCommandError,
  QmpConnectionError,
  type QmpClient,
  type QmpEvent,
} from './qmp-client.ts';
import { isPng } from './png.ts';
import { demoImages, killTracked, tempDataDir, trackPid } from './test-support.ts';

describe('QMP client against a real QEMU', () => {
  const tmp = tempDataDir('vdi-qmp-');
  const qmpPath = path.join(tmp.dir, 'qmp.sock');
  let child: ChildProcess | undefined;
  let qmp: QmpClient | undefined;
  const events: QmpEvent[] = [];

  beforeAll(async () => {
    const images = await demoImages();
    child = spawn(
      'qemu-system-x86_64',
      [
        '-nodefaults',
        '-accel',
        'tcg',
        '-m',
        '64',
        '-S',
        '-display',
        'none',
        '-device',
        'VGA',
        '-nic',
        'none',
        '-drive',
        `file=${images.iso},format=raw,if=ide,media=cdrom,readonly=on`,
        '-qmp',
        `unix:${qmpPath},server=on,wait=off`,
      ],
      { stdio: 'ignore' },
    );
    if (child.pid) trackPid(child.pid);
  });

  afterAll(() => {
    qmp?.close();
    child?.kill('SIGKILL');
    killTracked();
    tmp.cleanup();
  });

  it('connects (retrying until the socket exists) and negotiates', async () => {
    qmp = await connectQmp(qmpPath, { timeoutMs: 10_000 });
    qmp.on('event', (e) => events.push(e));
    expect(qmp.version.major).toBeGreaterThanOrEqual(7);
    expect(await qmp.execute('query-status')).toMatchObject({
      status: 'prelaunch',
      running: false,
    });
  });

  it('correlates concurrent commands by id', async () => {
    if (!qmp) throw new Error('not connected');
    const [status, kvm, name] = await Promise.all([
      qmp.execute('query-status'),
      qmp.execute('query-kvm'),
      qmp.execute('query-name'),
    ]);
    expect(status).toHaveProperty('status');
    expect(kvm).toHaveProperty('present');
    expect(name).toEqual({});
  });

  it('reports command errors with their class', async () => {
    if (!qmp) throw new Error('not connected');
    const error = await qmp.execute('no-such-command').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(QmpCommandError);
    expect((error as QmpCommandError).errorClass).toBe('CommandNotFound');
  });

  it('receives events and takes a PNG screendump', async () => {
    if (!qmp) throw new Error('not connected');
    await qmp.execute('cont');
    await new Promise((r) => setTimeout(r, 300));
    expect(events.map((e) => e.event)).toContain('RESUME');
    const file = path.join(tmp.dir, 'shot.png');
    await qmp.execute('screendump', { filename: file, format: 'png' });
    expect(isPng(readFileSync(file))).toBe(true);
    await qmp.execute('stop');
  });

  it('times out a command that is not answered (silent fake QMP server)', async () => {
    const sock = path.join(tmp.dir, 'silent.sock');
    const server = net.createServer((c) => {
      c.write(
        '{"QMP": {"version": {"qemu": {"micro": 0, "minor": 2, "major": 7}}, "capabilities": []}}\n',
      );
      c.on('data', (d) => {
        if (d.toString().includes('qmp_capabilities')) c.write('{"return": {}, "id": 1}\n'); // then never answer again
      });
    });
    await new Promise<void>((resolve) => server.listen(sock, resolve));
    try {
      const client = await connectQmp(sock, { timeoutMs: 2000 });
      const t0 = Date.now();
      await expect(
        client.execute('query-status', undefined, { timeoutMs: 200 }),
      ).rejects.toBeInstanceOf(QmpConnectionError);
      expect(Date.now() - t0).toBeGreaterThanOrEqual(190);
      client.close();
    } finally {
      server.close();
    }
  });

  it('detects the socket closing when QEMU exits', async () => {
    if (!qmp) throw new Error('not connected');
    const client = qmp;
    const closed = new Promise<void>((resolve) => client.once('close', () => resolve()));
    await client.execute('quit').catch(() => undefined);
    await closed;
    expect(client.closed).toBe(true);
    await expect(client.execute('query-status')).rejects.toBeInstanceOf(QmpConnectionError);
    expect(events.map((e) => e.event)).toContain('SHUTDOWN');
  });

  it('fails fast when nothing listens', async () => {
    const missing = path.join(tmp.dir, 'missing.sock');
    expect(existsSync(missing)).toBe(false);
    await expect(connectQmp(missing, { timeoutMs: 300 })).rejects.toBeInstanceOf(
      QmpConnectionError,
    );
  });

  it('stops retrying once its signal is aborted (the QEMU that would open the socket exited)', async () => {
    const missing = path.join(tmp.dir, 'never.sock');
    const exited = new AbortController();
    // Without the signal this would retry for the full ten minutes, past the test's time limit.
    const connecting = connectQmp(missing, { timeoutMs: 600_000, signal: exited.signal });
    exited.abort();
    await expect(connecting).rejects.toBeInstanceOf(QmpConnectionError);
  });
});
