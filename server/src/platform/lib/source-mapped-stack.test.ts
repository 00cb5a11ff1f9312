import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loggingOptions } from './logger-options.ts';
import { sourceMappedStack } from './source-mapped-stack.ts';

/** A TypeScript file whose function throws on line 6, compiled as the server bundle is. */
const SOURCE = `interface Box {
  value: number;
}

export function explode(box: Box): number {
  if (box.value > 0) throw new Error('exploded');
  return box.value;
}
`;

describe('source-mapped stacks of the compiled server', () => {
  let dir = '';
  let stack = '';
  const wasEnabled = process.sourceMapsEnabled;

  beforeAll(async () => {
    process.setSourceMapsEnabled(false);
    dir = mkdtempSync(join(tmpdir(), 'vdi-stack-'));
    writeFileSync(join(dir, 'boom.ts'), SOURCE);
    await build({
      absWorkingDir: dir,
      entryPoints: ['boom.ts'],
      outfile: 'out/boom.mjs',
      bundle: true,
      platform: 'node',
      format: 'esm',
      sourcemap: 'linked',
      logLevel: 'silent',
    });
    // As `npm start` runs the bundle: plain Node, which does not map stacks itself.
    const run = spawnSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import { explode } from ${JSON.stringify(pathToFileURL(join(dir, 'out/boom.mjs')).href)};
         try { explode({ value: 1 }); } catch (error) { process.stdout.write(error.stack); }`,
      ],
      { encoding: 'utf8' },
    );
    stack = run.stdout;
  });
  afterAll(() => {
    process.setSourceMapsEnabled(wasEnabled);
    rmSync(dir, { recursive: true, force: true });
  });

  it('shows a frame of the bundle at its TypeScript file, line and column', () => {
    expect(stack).toMatch(/boom\.mjs:\d+:\d+/);
    const mapped = sourceMappedStack(stack);
    const frame = mapped.split('\n').find((line) => line.includes('at explode'));
    expect(frame).toMatch(/at explode \(.*boom\.ts:6:\d+\)$/);
    expect(mapped).not.toContain('boom.mjs');
    // Frames of files without a map beside them stay as they were.
    const others = stack.split('\n').filter((line) => !line.includes('boom.mjs'));
    for (const line of others) expect(mapped.split('\n')).toContain(line);
  });

  it("leaves the packages' frames as they are, even with a map beside them", () => {
    const inPackage = join(dir, 'node_modules', 'pkg');
    mkdirSync(inPackage, { recursive: true });
    copyFileSync(join(dir, 'out/boom.mjs'), join(inPackage, 'boom.mjs'));
    copyFileSync(join(dir, 'out/boom.mjs.map'), join(inPackage, 'boom.mjs.map'));
    const frame = `    at explode (${join(inPackage, 'boom.mjs')}:3:9)`;
    expect(sourceMappedStack(`Error: exploded\n${frame}`)).toBe(`Error: exploded\n${frame}`);
  });

  it('is what the logger writes for an error', async () => {
    const written: string[] = [];
    const app = Fastify(
      loggingOptions({ logLevel: 'info', logFormat: 'json' }, { write: (c) => written.push(c) }),
    );
    const error = new Error('exploded');
    error.stack = stack;
    app.log.error({ err: error }, 'unexpected error');
    await app.close();
    const line = JSON.parse(written.join('')) as { err: { stack: string } };
    expect(line.err.stack).toBe(sourceMappedStack(stack));
    expect(line.err.stack).toMatch(/boom\.ts:6:\d+\)/);
  });

  it('leaves stacks to Node when it maps them itself', () => {
    process.setSourceMapsEnabled(true);
    try {
      expect(sourceMappedStack(stack)).toBe(stack);
    } finally {
      process.setSourceMapsEnabled(false);
    }
  });
});
