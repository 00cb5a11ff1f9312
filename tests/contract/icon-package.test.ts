// @vitest-environment node
/**
 * `@tabler/icons` is installed as an empty stand-in (vendor/tabler-icons-unused): the icon
 * components of `@tabler/icons-react` carry their own paths and never import it, and its SVG and
 * font files were a fifth of the files an install writes. This fails the day a release of
 * `@tabler/icons-react` imports it, before a screen would.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const require = createRequire(join(root, 'package.json'));

it('installs the stand-in, and no file of @tabler/icons-react imports @tabler/icons', () => {
  const standIn = JSON.parse(
    readFileSync(join(root, 'node_modules/@tabler/icons/package.json'), 'utf8'),
  ) as { private?: boolean };
  expect(standIn.private, 'node_modules/@tabler/icons is the stand-in').toBe(true);
  const dist = join(dirname(require.resolve('@tabler/icons-react/package.json')), 'dist');
  const files = readdirSync(dist, { recursive: true, encoding: 'utf8' }).filter((file) =>
    /\.(c?js|mjs|d\.ts)$/.test(file),
  );
  expect(files.length).toBeGreaterThan(1000);
  const importing = files.filter((file) =>
    /(from|require\(|import\()\s*['"]@tabler\/icons(\/[^'"]*)?['"]/.test(
      readFileSync(join(dist, file), 'utf8'),
    ),
  );
  expect(importing).toEqual([]);
});
