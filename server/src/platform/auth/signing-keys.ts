/**
 * The keys tokens are signed with, kept in the database (`signing_keys`) so that every portal
 * node signs and verifies with the same ones, whatever its DATA_DIR. The newest key signs (a
 * token names it in the `kid` of its header); every listed key verifies, so a rotation (a new
 * key added) leaves the tokens already out valid until they expire.
 *
 * The first key is made once, by whichever node gets there first: each node inserts its own
 * candidate under one fixed id with `ON CONFLICT DO NOTHING` and reads back the one that won.
 * A portal that kept its key in DATA_DIR/keys/jwt.key (before keys were in the database) offers
 * that key as the candidate, so the sessions of an upgraded portal stay valid; the file is not
 * read again once the database has a key.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Database } from '../db/client.ts';

/** The id of the first key; a token without a `kid` in its header was signed by it. */
export const INITIAL_KEY_ID = 'initial';
/** A token naming a key this node does not know makes it read the keys again, at most this often. */
const RELOAD_MIN_MS = 1_000;

export interface SigningKey {
  id: string;
  secret: Uint8Array;
}

export interface KeyRing {
  /** The key new tokens are signed with (the newest). */
  current(): SigningKey;
  /** The key of this id (the first key when none is named), or undefined when there is none. */
  find(id: string | undefined): Promise<SigningKey | undefined>;
}

export interface StoredKeyRing extends KeyRing {
  /** Reads the keys again (another node rotated them). */
  reload(): Promise<void>;
  /** Adds a new key, which signs from now on; answers its id. */
  rotate(): Promise<string>;
}

/** One key, held in memory (unit tests). */
export function staticKeyRing(secret: Uint8Array, id = INITIAL_KEY_ID): KeyRing {
  const key = { id, secret };
  return {
    current: () => key,
    find: async (kid) => ((kid ?? INITIAL_KEY_ID) === id ? key : undefined),
  };
}

const newSecret = () => randomBytes(64).toString('base64url');

/** The key an earlier version kept in DATA_DIR/keys/jwt.key, when there is one. */
function legacyFileKey(dataDir: string): string | undefined {
  const file = join(dataDir, 'keys', 'jwt.key');
  return existsSync(file) ? readFileSync(file, 'utf8').trim() || undefined : undefined;
}

interface KeyRow {
  id: string;
  secret: string;
}

export async function openKeyRing(
  query: Database['query'],
  dataDir: string,
): Promise<StoredKeyRing> {
  const read = () =>
    query<KeyRow>('SELECT id, secret FROM signing_keys ORDER BY created_at DESC, id DESC');
  let rows = await read();
  if (rows.length === 0) {
    await query('INSERT INTO signing_keys (id, secret) VALUES ($1, $2) ON CONFLICT DO NOTHING', [
      INITIAL_KEY_ID,
      legacyFileKey(dataDir) ?? newSecret(),
    ]);
    rows = await read();
  }
  const encoder = new TextEncoder();
  let keys = new Map<string, SigningKey>();
  let newest: SigningKey | undefined;
  const take = (list: KeyRow[]) => {
    keys = new Map(list.map((r) => [r.id, { id: r.id, secret: encoder.encode(r.secret) }]));
    newest = keys.get(list[0]?.id ?? '');
  };
  take(rows);
  let lastMiss = 0;
  const reload = async () => take(await read());

  return {
    current() {
      if (!newest) throw new Error('no signing key');
      return newest;
    },
    async find(id) {
      const kid = id ?? INITIAL_KEY_ID;
      const known = keys.get(kid);
      if (known || Date.now() - lastMiss < RELOAD_MIN_MS) return known;
      lastMiss = Date.now();
      await reload();
      return keys.get(kid);
    },
    reload,
    async rotate() {
      const id = randomBytes(9).toString('base64url');
      await query('INSERT INTO signing_keys (id, secret) VALUES ($1, $2)', [id, newSecret()]);
      await reload();
      return id;
    },
  };
}
