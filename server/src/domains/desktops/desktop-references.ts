/**
 * The ids a desktop body names (the template, ISOs and floppies, network interfaces, GPU profiles
 * and the stock card), checked against what the caller may use before anything is written. An
 * unknown id answers 404 `not_found` (a floppy listed as an ISO, or the reverse, 400
 * `media_invalid`); an id the caller may not use answers 403. The first problem refuses the whole
 * request, so a body is applied entirely or not at all.
 *
 * Who may use what: a template or a medium, its owner and whoever its allowed lists share it with
 * (`isAllowed`); a network interface, whoever its allowed lists name (unknown: 404, not allowed:
 * 403 `interface_not_allowed`); a video, a graphics, a boot device or a disk bus, whoever the
 * hardware catalog offers it to (a value it does not offer is 400); a GPU profile (an enabled
 * profile of an enabled reservable item), whoever its allowed lists name.
 *
 * An update body that repeats the desktop's id must name the desktop being edited (400 otherwise).
 *
 * Ids the edited desktop already carries (or, for a new desktop, that its template carries) are
 * kept without a new check: the caller got them with the desktop or the template, and sending
 * them back asks for nothing new.
 */
import type { FastifyInstance } from 'fastify';
import { constants } from '../../../../src/generated/constants.ts';
import type {
  DesktopHardware,
  HardwareAllowedItem,
  ImageUpload,
} from '../../../../src/generated/types.ts';
import type { MediaRow, TemplateRow } from '../../platform/db/schema.ts';
import { ApiError } from '../../platform/http/api-error.ts';
import { isAllowed, type Caller } from '../../platform/lib/ownership.ts';
import { hasRoleAtLeast, role } from '../../../../src/generated/policy.ts';
import { networkItems } from './networks.ts';

/** The ids of a create or update body. */
export interface DesktopReferences {
  /** The edited desktop's own id (update bodies may repeat it). */
  id?: string | undefined;
  template_id?: string | undefined;
  hardware?: DesktopHardware | undefined;
  image?: ImageUpload | undefined;
}

/** What the caller already holds: the edited desktop, or the template of a new desktop. */
export interface CarriedReferences {
  id?: string;
  hardware: DesktopHardware;
  image: { id?: string | undefined };
}

type ReferenceCaller = Caller & { groupId: string };

/**
 * The hardware a caller may choose from (the allowed-hardware answer and the checks share it);
 * `profiles` are GPU profiles besides "None", offered as not allowed when `usable` is false.
 */
export function hardwareCatalog(
  auth: Caller,
  profiles: readonly {
    id: string;
    name: string;
    description: string | null;
    usable?: boolean;
  }[],
  /** The networks (the networks table), each allowed when the caller may use it. */
  networks: readonly HardwareAllowedItem[],
) {
  const item = (id: string, name: string, description = ''): HardwareAllowedItem => ({
    id,
    name,
    description,
    allowed: true,
    editable: hasRoleAtLeast(auth.role, role.admin),
  });
  return {
    interfaces: [...networks],
    graphics: [item('default', 'Default')],
    videos: [item('default', 'Default'), item('virtio', 'Virtio')],
    boot_order: [item('disk', 'Hard disk'), item('iso', 'CD/DVD'), item('floppy', 'Floppy')],
    disk_bus: [
      item('default', 'Default'),
      item('virtio', 'Virtio'),
      item('ide', 'IDE'),
      item('sata', 'SATA'),
    ],
    reservables: {
      vgpus: [
        item('None', 'No GPU'),
        ...profiles.map((p) => ({
          ...item(p.id, p.name, p.description ?? ''),
          allowed: p.usable !== false,
        })),
      ],
    },
  };
}

/** The stock cards a desktop may show: ids 1..stockCards. */
const STOCK_CARD_IDS = new Set(
  Array.from({ length: constants.desktops.stockCards.value }, (_, i) => String(i + 1)),
);

const unknownId = (what: string, id: string, path: string) =>
  new ApiError(
    'not_found',
    `Unknown ${what} ${id}`,
    'not_found',
    { id },
    { errors: { [path]: 'not_found' } },
  );

const notAllowed = (what: string, code: string, id: string, path: string) =>
  new ApiError(
    'forbidden',
    `The ${what} ${id} is not available to you`,
    code,
    { id },
    {
      errors: { [path]: code },
    },
  );

/**
 * The video of a desktop that shows only through its GPU: always accepted, and reset to Default
 * on a desktop without a GPU profile (withGpuVideo).
 */
const GPU_ONLY_VIDEO = 'none';

const MEDIA_LISTS = [
  { list: 'isos', kind: 'iso' },
  { list: 'floppies', kind: 'floppy' },
] as const;

export function createReferenceCheck(app: FastifyInstance) {
  /** The current role of an item's owner (null: the owner is gone). */
  const ownerRoleOf = async (userId: string) => (await app.users.byId(userId))?.role ?? null;
  const usableTemplate = async (auth: ReferenceCaller, id: string): Promise<TemplateRow> => {
    const template = await app.templates.get(id);
    if (!template?.enabled)
      throw new ApiError(
        'not_found',
        'Template not found',
        'not_found',
        { id },
        {
          errors: { '/template_id': 'not_found' },
        },
      );
    if (!isAllowed(auth, { ...template, ownerRole: await ownerRoleOf(template.userId) }))
      throw notAllowed('template', 'template_not_allowed', id, '/template_id');
    // A template whose disk is still being made (or could not be made) has nothing to start from.
    if (template.status !== 'ready')
      throw new ApiError(
        'precondition_required',
        template.status === 'failed'
          ? 'The template has failed'
          : 'The template is still being created',
        template.status === 'failed' ? 'template_failed' : 'template_not_ready',
        { id },
        {
          errors: {
            '/template_id': template.status === 'failed' ? 'template_failed' : 'template_not_ready',
          },
        },
      );
    return template;
  };

  const assertMedia = async (
    auth: ReferenceCaller,
    sent: DesktopHardware,
    carried: DesktopHardware | undefined,
  ) => {
    const requested = MEDIA_LISTS.flatMap(({ list, kind }) => {
      const kept = new Set((carried?.[list] ?? []).map((m) => m.id));
      return (sent[list] ?? []).flatMap((m, i) =>
        kept.has(m.id) ? [] : [{ id: m.id, kind, path: `/hardware/${list}/${i}/id` }],
      );
    });
    if (requested.length === 0) return;
    const rows = new Map<string, MediaRow>(
      (await app.media.byIds([...new Set(requested.map((r) => r.id))])).map((r) => [r.id, r]),
    );
    for (const { id, kind, path } of requested) {
      const row = rows.get(id);
      if (!row || row.status === 'deleted') throw unknownId('media', id, path);
      if (row.kind !== kind)
        throw new ApiError(
          'bad_request',
          `The media ${id} is not a ${kind}`,
          'media_invalid',
          {
            id,
          },
          { errors: { [path]: 'media_invalid' } },
        );
      if (!isAllowed(auth, { ...row, ownerRole: await ownerRoleOf(row.userId) }))
        throw notAllowed('media', 'media_not_allowed', id, path);
    }
  };

  /** Ids of a catalog list: unknown → 404, offered but not to this caller → 403. */
  const assertOffered = (
    what: string,
    code: string,
    items: readonly HardwareAllowedItem[],
    sent: readonly string[],
    carried: readonly string[],
    path: string,
  ) => {
    sent.forEach((id, i) => {
      if (carried.includes(id)) return;
      const item = items.find((c) => c.id === id);
      if (!item) throw unknownId(what, id, `${path}/${i}`);
      if (item.allowed === false) throw notAllowed(what, code, id, `${path}/${i}`);
    });
  };

  /**
   * Values of a hardware list the catalog offers (videos, boot devices...): one it does not offer
   * at all answers 400 `bad_request`, one it offers as not allowed to this caller 403 `forbidden`.
   */
  const assertChoice = (
    what: string,
    items: readonly HardwareAllowedItem[],
    sent: readonly string[],
    carried: readonly string[],
    path: string,
    options: { single?: boolean } = {},
  ) => {
    sent.forEach((value, i) => {
      if (carried.includes(value)) return;
      const at = options.single ? path : `${path}/${i}`;
      const item = items.find((c) => c.id === value);
      if (!item)
        throw new ApiError(
          'bad_request',
          `The ${what} ${value} is not offered`,
          'bad_request',
          { value },
          { errors: { [at]: 'bad_request' } },
        );
      if (item.allowed === false)
        throw new ApiError(
          'forbidden',
          `The ${what} ${value} is not available to you`,
          'forbidden',
          { value },
          { errors: { [at]: 'forbidden' } },
        );
    });
  };

  /**
   * Refuses the body when it names an id the caller may not use; answers the template it names.
   * `carried` is the edited desktop (update); a create carries its template's ids.
   */
  return async function assertUsableReferences(
    auth: ReferenceCaller,
    sent: DesktopReferences,
    carried?: CarriedReferences,
  ): Promise<TemplateRow | undefined> {
    if (sent.id !== undefined && sent.id !== carried?.id)
      throw new ApiError(
        'bad_request',
        'The body names another desktop than the one edited',
        'bad_request',
        { id: sent.id },
        { errors: { '/id': 'bad_request' } },
      );
    const template =
      sent.template_id !== undefined ? await usableTemplate(auth, sent.template_id) : undefined;
    const held = carried ?? template;
    const hardware = sent.hardware;
    if (hardware) {
      await assertMedia(auth, hardware, held?.hardware);
      const carriedProfiles = held?.hardware.reservables?.vgpus ?? [];
      const newProfile = (hardware.reservables?.vgpus ?? []).some(
        (v) => v !== 'None' && !carriedProfiles.includes(v),
      );
      const carriedNetworks = held?.hardware.interfaces ?? [];
      const newNetwork = (hardware.interfaces ?? []).some((n) => !carriedNetworks.includes(n));
      // The GPU profiles and the networks are read only when the body names one the desktop does
      // not carry.
      const catalog = hardwareCatalog(
        auth,
        newProfile ? await app.bookingService.profilesFor(auth) : [],
        newNetwork ? await networkItems(app.db, auth) : [],
      );
      assertOffered(
        'network interface',
        'interface_not_allowed',
        catalog.interfaces,
        hardware.interfaces ?? [],
        held?.hardware.interfaces ?? [],
        '/hardware/interfaces',
      );
      // Videos, graphics, boot devices and the disk bus: only what the catalog offers the caller.
      const choices = [
        ['video', catalog.videos, 'videos', GPU_ONLY_VIDEO],
        ['graphics', catalog.graphics, 'graphics', null],
        ['boot device', catalog.boot_order, 'boot_order', null],
      ] as const;
      for (const [what, items, list, always] of choices)
        assertChoice(
          what,
          items,
          (hardware[list] ?? []).filter((value) => value !== always),
          held?.hardware[list] ?? [],
          `/hardware/${list}`,
        );
      if (hardware.disk_bus !== undefined && hardware.disk_bus !== held?.hardware.disk_bus)
        assertChoice('disk bus', catalog.disk_bus, [hardware.disk_bus], [], '/hardware/disk_bus', {
          single: true,
        });
      assertOffered(
        'GPU profile',
        'reservable_not_allowed',
        catalog.reservables.vgpus,
        hardware.reservables?.vgpus ?? [],
        held?.hardware.reservables?.vgpus ?? [],
        '/hardware/reservables/vgpus',
      );
    }
    const card = sent.image;
    if (card?.type === 'stock' && card.id !== undefined) {
      if (!STOCK_CARD_IDS.has(card.id) && card.id !== held?.image.id)
        throw unknownId('stock card', card.id, '/image/id');
    }
    return template;
  };
}
