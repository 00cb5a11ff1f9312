/**
 * Demo data (docs/contracts.md "Demo data"), written when the database has no users: category
 * `default`, one group and one account per role (password DEMO_PASSWORD or random), a demo template
 * (its disk: the idle guest, ./idle-guest.ts) and demo media (made by the hypervisor's image
 * script), three stopped desktops for `user`, and the bookings demo (./bookings.ts: a reservable
 * item with two profiles, a plan, the priority rules, and `advanced`'s desktop that needs a
 * booking). Also seedDesktops() for benchmarks.
 *
 * The accounts side (./accounts.ts): every seeded account has a verified `<username>@example.org`
 * address and has accepted the disclaimer; registration codes on three groups; `newcomer`, who
 * must accept the disclaimer and change the password at the first login; and the category's
 * account policy that asks for the disclaimer.
 *
 * A second category, "Second school" (./second-school.ts), with its manager `manager2`: a manager
 * of another category for the administration area.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { eq } from 'drizzle-orm';
import { hashPassword } from '../platform/auth/passwords.ts';
import { categories, desktops, groups, media, templates, users } from '../platform/db/schema.ts';
import { NEW_DESKTOP_HARDWARE } from '../domains/desktops/index.ts';
import { userWrites } from '../domains/directory/index.ts';
import { portalKeyFile, sshKeyPair } from '../domains/bastion/index.ts';
import { roles } from '../../../src/generated/policy.ts';
import { CLASSES, TEACHER_USERNAME, seedClasses, studentName } from './classes.ts';
import { writeIdleGuestDisk } from './idle-guest.ts';
import { writeTinyLinuxDisk } from './tiny-linux.ts';
import { seedBookings } from './bookings.ts';
import { OTHER_CATEGORY, OTHER_MANAGER_USERNAME, seedOtherCategory } from './second-school.ts';
import {
  DEMO_ACCOUNT_POLICIES,
  ENROLLMENT_CODES,
  NEWCOMER_USERNAME,
  demoAccount,
  type EnrollmentCode,
} from './accounts.ts';
import type {
  DesktopGuestProperties,
  DesktopHardware,
  Role,
} from '../../../src/generated/types.ts';

export const DEMO_ROLES: readonly Role[] = roles;
export const DEMO_TEMPLATE_ID = 'demo-template';
export const DEMO_MEDIA_ID = 'demo-iso';
export const TINY_LINUX_TEMPLATE_ID = 'tiny-linux';

const groupOf: Record<Role, string> = {
  admin: 'default-admins',
  manager: 'default-managers',
  advanced: 'default-advanced',
  user: 'default-users',
};

/** The spec's new-desktop hardware (desktop schema `x-constants.newDesktopHardware`), no GPU. */
export const demoHardware = (): DesktopHardware => ({
  ...NEW_DESKTOP_HARDWARE,
  reservables: { vgpus: null },
});

export const demoGuestProperties = (): DesktopGuestProperties => ({
  fullscreen: false,
  credentials: { username: 'isard', password: 'pirineus' },
  viewers: { browser_vnc: { options: null }, file_spice: { options: null } },
});

/** The demo template's card; desktops without one get the stock card derived from their id. */
const demoTemplateImage = () => ({ type: 'stock' as const, id: '1', url: '' });

export interface SeedResult {
  seeded: boolean;
  /** the accounts' password when it was generated here (print it once) */
  generatedPassword?: string;
  usernames: string[];
  /** the registration codes of the demo groups */
  registrationCodes: readonly EnrollmentCode[];
}

export async function seedIfEmpty(
  app: FastifyInstance,
  options: { password?: string | undefined } = {},
): Promise<SeedResult> {
  // The role accounts, then the classes' teacher and the range of students (see ./classes.ts).
  const usernames = [
    ...DEMO_ROLES,
    TEACHER_USERNAME,
    `${studentName(CLASSES[0].first)}…${studentName(CLASSES[1].last)}`,
    `${NEWCOMER_USERNAME} (accepts the disclaimer and changes the password at the first login)`,
    `${OTHER_MANAGER_USERNAME} (manager of the category "${OTHER_CATEGORY.id}")`,
  ];
  const registrationCodes = ENROLLMENT_CODES;
  if ((await app.users.count()) > 0) return { seeded: false, usernames, registrationCodes };
  const generated = options.password ? undefined : randomBytes(9).toString('base64url');
  const password = options.password ?? generated ?? '';
  const passwordHash = await hashPassword(password);
  const ids = Object.fromEntries(DEMO_ROLES.map((r) => [r, randomUUID()])) as Record<Role, string>;
  const imagesDir = join(app.config.dataDir, 'images');
  // The demo template boots the idle guest (sleeps in HLT; GRUB busy-polls under TCG), written over
  // the GRUB disk prepareDemoImages made at ready time. Without qemu-img the GRUB disk stays.
  if (app.config.prepareImages)
    await writeIdleGuestDisk(join(imagesDir, 'demo-template.qcow2')).catch((err: unknown) => {
      app.log.warn({ err }, 'demo template: idle guest disk not written, keeping the GRUB disk');
    });
  // Tiny Linux: a real Linux guest built from Debian packages; skipped (one line) when missing.
  const tinyLinuxDisk = join(imagesDir, 'tiny-linux.qcow2');
  const tinyLinux =
    app.config.prepareImages &&
    app.config.tinyLinux &&
    // Its root trusts the portal's bastion key: the SSH bastion signs in to it with that key.
    (await writeTinyLinuxDisk(tinyLinuxDisk, {
      authorizedKeys: (await sshKeyPair(portalKeyFile(app.config), 'vdi-portal bastion')).publicKey,
    }).then(
      () => true,
      (err: unknown) => {
        app.log.warn(
          `Tiny Linux template skipped: ${err instanceof Error ? err.message : String(err)}`,
        );
        return false;
      },
    ));

  await app.db.transaction(async (tx) => {
    await tx.insert(categories).values({
      id: 'default',
      name: 'Default',
      description: 'Default category',
      customUrlName: 'default',
    });
    await tx.insert(groups).values(
      DEMO_ROLES.map((r) => ({
        id: groupOf[r],
        categoryId: 'default',
        name: groupOf[r],
        description: `Default ${r} group`,
        enrollment: ENROLLMENT_CODES.find((c) => c.groupId === groupOf[r])?.enrollment ?? null,
      })),
    );
    await userWrites.createMany(tx, [
      ...DEMO_ROLES.map((r) =>
        demoAccount({
          id: ids[r],
          username: r,
          name: r === 'user' ? 'Demo User' : `Demo ${r.charAt(0).toUpperCase()}${r.slice(1)}`,
          groupId: groupOf[r],
          role: r,
          passwordHash,
        }),
      ),
      {
        ...demoAccount({
          id: randomUUID(),
          username: NEWCOMER_USERNAME,
          name: 'Demo Newcomer',
          groupId: groupOf.user,
          role: 'user',
          passwordHash,
        }),
        passwordResetRequired: true,
        disclaimerAcknowledged: false,
      },
    ]);
    await seedClasses(app, passwordHash, tx);
    await seedOtherCategory(tx, passwordHash);

    await tx.insert(templates).values({
      id: DEMO_TEMPLATE_ID,
      name: 'Demo template',
      description: 'Idle guest: echoes what you type, sleeps in HLT (boots in a second)',
      userId: ids.admin,
      categoryId: 'default',
      groupId: groupOf.admin,
      hardware: demoHardware(),
      guestProperties: demoGuestProperties(),
      image: demoTemplateImage(),
      diskPath: join(imagesDir, 'demo-template.qcow2'),
      // Shared with every role.
      allowed: { roles: [], categories: false, groups: false, users: false },
    });
    if (tinyLinux)
      await tx.insert(templates).values({
        id: TINY_LINUX_TEMPLATE_ID,
        name: 'Tiny Linux',
        description:
          'A real Linux (Debian kernel, busybox, dropbear): DHCP, a web page on port 80, SSH, a console login',
        userId: ids.admin,
        categoryId: 'default',
        groupId: groupOf.admin,
        // The least memory a desktop may have (the schema's minimum): the form takes it as it is.
        hardware: { ...demoHardware(), memory: 0.5 },
        guestProperties: demoGuestProperties(),
        image: { type: 'stock' as const, id: '2', url: '' },
        diskPath: tinyLinuxDisk,
        allowed: { roles: [], categories: false, groups: false, users: false },
      });
    await tx.insert(media).values({
      id: DEMO_MEDIA_ID,
      name: 'Demo ISO',
      description: 'GRUB rescue CD',
      kind: 'iso',
      status: 'downloaded',
      path: join(imagesDir, 'demo.iso'),
      userId: ids.admin,
      categoryId: 'default',
      groupId: groupOf.admin,
      allowed: { roles: [], categories: false, groups: false, users: false },
    });
    await tx.insert(desktops).values(
      ['Demo desktop 1', 'Demo desktop 2', 'Demo desktop 3'].map((name) => ({
        id: randomUUID(),
        userId: ids.user,
        categoryId: 'default',
        groupId: groupOf.user,
        name,
        state: 'creating' as const,
        description: 'A desktop from the demo template',
        templateId: DEMO_TEMPLATE_ID,
        hardware: demoHardware(),
        guestProperties: demoGuestProperties(),
      })),
    );
    await seedBookings(
      tx,
      { admin: ids.admin, advanced: { id: ids.advanced, groupId: groupOf.advanced } },
      {
        templateId: DEMO_TEMPLATE_ID,
        hardware: demoHardware(),
        guestProperties: demoGuestProperties(),
      },
    );
  });
  // Through the settings repository, so its cache sees the policy at once.
  await app.settings.set('account_policies', DEMO_ACCOUNT_POLICIES);
  return generated
    ? { seeded: true, generatedPassword: generated, usernames, registrationCodes }
    : { seeded: true, usernames, registrationCodes };
}

/** Adds n stopped desktops for a user (benchmarks, load tests). Returns their ids. */
export async function seedDesktops(
  app: FastifyInstance,
  username: string,
  n: number,
): Promise<string[]> {
  const rows = await app.db.select().from(users).where(eq(users.uid, username)).limit(1);
  const owner = rows[0];
  if (!owner) throw new Error(`no user ${username}`);
  const values = Array.from({ length: n }, (_, i) => ({
    id: randomUUID(),
    userId: owner.id,
    categoryId: owner.categoryId,
    groupId: owner.groupId,
    name: `Bench desktop ${String(i + 1).padStart(4, '0')} ${randomBytes(3).toString('hex')}`,
    description: 'Benchmark desktop',
    templateId: DEMO_TEMPLATE_ID,
    hardware: demoHardware(),
    guestProperties: demoGuestProperties(),
  }));
  for (let i = 0; i < values.length; i += 500)
    await app.db.insert(desktops).values(values.slice(i, i + 500));
  return values.map((v) => v.id);
}
