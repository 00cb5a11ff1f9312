/**
 * Targets for the fuzz suite on top of the demo seed: extra accounts ("another user of the same
 * role") and throwaway objects owned by one account, made fresh for every operation so that a
 * destructive call that wrongly succeeds cannot take a fixture away from the next operation.
 * Objects are private (shared with nobody); desktops are stopped without a disk and templates
 * point at a disk that does not exist, so no start, even one that wrongly succeeds, can boot a
 * virtual machine.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { operations, type Operation } from '../../../../src/generated/api.ts';
import type { Role } from '../../../../src/generated/types.ts';
import { desktops, media, templates, users } from '../../../src/platform/db/schema.ts';
import { demoGuestProperties, demoHardware } from '../../../src/seed/index.ts';
import { injectWithToken } from '../helper.ts';

/**
 * The kinds of object the suite can make: storage names (src/generated/db.ts `storage`), and
 * `floppies`, media of the floppy kind (a desktop takes them only where floppies go).
 */
export const FIXTURE_KINDS = ['desktops', 'media', 'floppies', 'templates', 'recycleBin'] as const;
export type FixtureKind = (typeof FIXTURE_KINDS)[number];

export interface Account {
  id: string;
  username: string;
  role: Role;
  categoryId: string;
  groupId: string;
  token: string;
}

const SHARED_WITH_NOBODY = {
  roles: false,
  categories: false,
  groups: false,
  users: false,
} as const;

/** A local account of `role` in the category and group of the demo account of that role. */
export async function addAccount(
  app: FastifyInstance,
  role: Role,
  username: string,
): Promise<Omit<Account, 'token'>> {
  const demo = await app.users.findLocal(role, 'default');
  if (!demo) throw new Error(`fuzz: no demo account ${role}`);
  const id = randomUUID();
  await app.db.insert(users).values({
    id,
    uid: username,
    username,
    name: username,
    provider: 'local',
    categoryId: demo.categoryId,
    groupId: demo.groupId,
    role,
    passwordHash: demo.passwordHash,
    email: `${username}@example.org`,
    emailVerified: true,
    disclaimerAcknowledged: true,
    lang: 'en',
  });
  return { id, username, role, categoryId: demo.categoryId, groupId: demo.groupId };
}

let serial = 0;

/** One throwaway object of each kind for `owner`, made on first use. */
export class Targets {
  private readonly ids = new Map<FixtureKind, string>();

  constructor(
    private readonly app: FastifyInstance,
    private readonly owner: Account,
  ) {}

  async all(): Promise<Record<FixtureKind, string>> {
    const out = {} as Record<FixtureKind, string>;
    for (const kind of FIXTURE_KINDS) out[kind] = await this.id(kind);
    return out;
  }

  async id(kind: FixtureKind): Promise<string> {
    const known = this.ids.get(kind);
    if (known) return known;
    const made = await this.make(kind);
    this.ids.set(kind, made);
    return made;
  }

  private owned() {
    return {
      userId: this.owner.id,
      categoryId: this.owner.categoryId,
      groupId: this.owner.groupId,
    };
  }

  private async desktop(): Promise<{ id: string; name: string }> {
    const id = randomUUID();
    const name = `fuzz desktop ${++serial}`;
    await this.app.db.insert(desktops).values({
      id,
      ...this.owned(),
      name,
      state: 'stopped',
      hardware: demoHardware(),
      guestProperties: demoGuestProperties(),
    });
    return { id, name };
  }

  private async make(kind: FixtureKind): Promise<string> {
    const { app } = this;
    switch (kind) {
      case 'desktops':
        return (await this.desktop()).id;
      case 'media':
      case 'floppies': {
        const id = `fuzz-media-${randomUUID()}`;
        await app.db.insert(media).values({
          id,
          name: id,
          kind: kind === 'media' ? 'iso' : 'floppy',
          status: 'downloaded',
          path: `/nonexistent/${id}`,
          ...this.owned(),
          allowed: SHARED_WITH_NOBODY,
        });
        return id;
      }
      case 'templates': {
        const id = `fuzz-template-${randomUUID()}`;
        await app.db.insert(templates).values({
          id,
          name: id,
          ...this.owned(),
          hardware: demoHardware(),
          guestProperties: demoGuestProperties(),
          image: { type: 'stock', id: '1', url: '' },
          allowed: SHARED_WITH_NOBODY,
          // A disk that does not exist: desktops made from it fail at disk creation, never boot.
          diskPath: `/nonexistent/${id}.qcow2`,
        });
        return id;
      }
      case 'recycleBin': {
        // A real entry: the owner deletes a desktop through the API.
        const { id, name } = await this.desktop();
        const op: Operation = operations['desktops.delete'];
        const res = await injectWithToken(app, this.owner.token, {
          method: op.method,
          url: `/api/v3${op.path.replace('{id}', id)}`,
        });
        const [row] = await app.database.query<{ id: string }>(
          'SELECT id FROM recycle_bin WHERE owner_id = $1 AND item_name = $2',
          [this.owner.id, name],
        );
        if (!row) throw new Error(`fuzz: no recycle bin entry (${res.statusCode} ${res.body})`);
        return row.id;
      }
    }
  }
}
