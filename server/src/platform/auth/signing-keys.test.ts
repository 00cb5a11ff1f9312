/**
 * The token keys in the database: the first key is made once however many nodes start at once,
 * a portal upgraded from a key file keeps its tokens valid, and a rotated key signs while the
 * older ones still verify.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT } from 'jose';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../db/client.ts';
import { createTestDatabase } from '../../../test/support/helper.ts';
import { INITIAL_KEY_ID, openKeyRing } from './signing-keys.ts';
import { ISSUER, KID, TokenService } from './tokens.ts';

const databases: Database[] = [];
const folders: string[] = [];

const fresh = async () => {
  const database = await openDatabase({ databaseUrl: await createTestDatabase(), dataDir: '' });
  databases.push(database);
  return database;
};
const folder = () => {
  const dir = mkdtempSync(join(tmpdir(), 'vdi-keys-'));
  folders.push(dir);
  return dir;
};

afterAll(async () => {
  for (const d of databases) await d.close();
  for (const f of folders) rmSync(f, { recursive: true, force: true });
});

const loginClaims = {
  kid: KID,
  session_id: 's1',
  data: { user_id: 'u1', role_id: 'user' },
};

describe('token signing keys in the database', () => {
  it('makes the first key once when several nodes start at once', async () => {
    const database = await fresh();
    const rings = await Promise.all(
      Array.from({ length: 5 }, () => openKeyRing(database.query, folder())),
    );
    const secrets = new Set(rings.map((r) => Buffer.from(r.current().secret).toString()));
    expect(secrets.size).toBe(1);
    expect(rings.every((r) => r.current().id === INITIAL_KEY_ID)).toBe(true);
    expect(await database.query('SELECT id FROM signing_keys')).toHaveLength(1);
  });

  it("adopts an upgraded portal's key file, so its tokens stay valid", async () => {
    const database = await fresh();
    const dir = folder();
    mkdirSync(join(dir, 'keys'));
    const fileKey = 'a-key-an-earlier-version-wrote-into-its-data-directory';
    writeFileSync(join(dir, 'keys', 'jwt.key'), `${fileKey}\n`);
    // A token of the earlier version: signed with the file's key, no kid in its header.
    const old = await new SignJWT(loginClaims)
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuer(ISSUER)
      .setSubject('u1')
      .setExpirationTime('10m')
      .sign(new TextEncoder().encode(fileKey));
    const tokens = new TokenService(await openKeyRing(database.query, dir), 60);
    await expect(tokens.verify(old)).resolves.toMatchObject({ sub: 'u1' });
    // Another node, without the file, verifies it too.
    const elsewhere = new TokenService(await openKeyRing(database.query, folder()), 60);
    await expect(elsewhere.verify(old)).resolves.toMatchObject({ sub: 'u1' });
  });

  it('signs with a rotated key, verifies with every key, refuses an unknown one', async () => {
    const database = await fresh();
    const ring = await openKeyRing(database.query, folder());
    const tokens = new TokenService(ring, 60);
    const sign = () =>
      tokens.sign(
        new SignJWT(loginClaims).setIssuer(ISSUER).setSubject('u1').setExpirationTime('10m'),
      );
    const before = await sign();
    // A node that has not heard of the rotation reads the keys when a token names a new one.
    const other = new TokenService(await openKeyRing(database.query, folder()), 60);
    const kid = await ring.rotate();
    expect(ring.current().id).toBe(kid);
    const after = await sign();
    const headerKid = (jwt: string) =>
      (JSON.parse(Buffer.from(jwt.split('.')[0] ?? '', 'base64url').toString()) as { kid: string })
        .kid;
    expect([headerKid(before), headerKid(after)]).toEqual([INITIAL_KEY_ID, kid]);
    for (const jwt of [before, after, before])
      await expect(other.verify(jwt)).resolves.toMatchObject({ sub: 'u1' });
    const [head, body, signature] = after.split('.');
    const renamed = `${Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT', kid: 'nope' })).toString('base64url')}.${body}.${signature}`;
    expect(head).not.toBe(renamed.split('.')[0]);
    await expect(other.verify(renamed)).rejects.toMatchObject({ descriptionCode: 'invalid_token' });
  });
});
