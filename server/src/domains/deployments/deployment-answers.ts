/** The answer shapes of deployments: the list item, a deployment desktop, a person. */
import type { FastifyInstance } from 'fastify';
import type { DeploymentRow } from '../../platform/db/schema.ts';
import { stockImageOf, toWire } from '../desktops/index.ts';
import { configuredViewers } from '../../../../common/viewers.ts';
import type {
  Deployment,
  DeploymentDesktop,
  DeploymentPerson,
} from '../../../../src/generated/types.ts';

/** The booking fields of a deployment's answers. */
export interface DeploymentBookingState {
  needs_booking: boolean;
  booking_id: string | false;
  next_booking_start: string | null;
  next_booking_end: string | null;
}

const epoch = (d: Date | null) => (d ? Math.floor(d.getTime() / 1000) : 0);

export const person = (u: {
  id: string;
  name: string;
  uid: string;
  groupName: string | null;
  categoryName: string | null;
}): DeploymentPerson => ({
  id: u.id,
  name: u.name,
  uid: u.uid,
  group_name: u.groupName,
  category_name: u.categoryName,
});

export type DeploymentAnswers = ReturnType<typeof deploymentAnswers>;

export function deploymentAnswers(app: FastifyInstance) {
  const templateName = async (templateId: string | null): Promise<string | false> =>
    templateId ? ((await app.templates.get(templateId))?.name ?? false) : false;

  const listItem = async (row: DeploymentRow): Promise<Deployment> => {
    const counts = (await app.deployments.counts([row.id])).get(row.id);
    const booking = (await app.bookingService.deploymentBookings([row])).get(row.id);
    return itemOf(row, counts, await templateName(row.templateId), booking);
  };

  const itemOf = (
    row: DeploymentRow,
    counts: Awaited<ReturnType<typeof app.deployments.counts>> extends Map<string, infer C>
      ? C | undefined
      : never,
    template: string | false,
    booking: DeploymentBookingState | undefined,
  ): Deployment => ({
    id: row.id,
    name: row.name,
    description: row.description,
    desktop_name: row.desktopName,
    visible: row.visible,
    tag: row.id,
    tag_name: row.name,
    tag_visible: row.visible,
    template,
    allowed: row.allowed,
    user: row.userId,
    co_owners: row.coOwners,
    user_permissions: row.userPermissions,
    needs_booking: booking?.needs_booking ?? false,
    next_booking_start: booking?.next_booking_start ?? null,
    next_booking_end: booking?.next_booking_end ?? null,
    booking_id: booking?.booking_id ?? false,
    totalDesktops: counts?.totalDesktops ?? 0,
    visibleDesktops: counts?.visibleDesktops ?? 0,
    startedDesktops: counts?.startedDesktops ?? 0,
    creatingDesktops: counts?.creatingDesktops ?? 0,
    version: row.version,
  });

  const desktopItemOf = (
    d: Awaited<ReturnType<typeof app.deployments.desktopsOf>>[number],
  ): DeploymentDesktop => {
    const wire = toWire(d.row);
    return {
      id: d.row.id,
      name: d.row.name,
      description: d.row.description,
      user: d.row.userId,
      user_name: d.userName,
      user_photo: d.userPhoto,
      group: d.row.groupId,
      group_name: d.groupName,
      category: d.row.categoryId,
      category_name: d.categoryName,
      state: d.row.state,
      viewers: configuredViewers(d.row.guestProperties.viewers),
      accessed: epoch(d.row.accessed),
      ip: wire.ip ?? null,
      viewer: false,
      image: Object.keys(d.row.image).length > 0 ? d.row.image : stockImageOf(d.row.id),
      needs_booking: wire.reservables !== undefined,
      booking_id: wire.booking_id ?? false,
      visible: d.row.visible,
      tag: d.row.tag ?? '',
      type: d.row.type,
      template: d.row.templateId,
      editable: true,
      server: d.row.server,
      current_action: d.row.currentAction,
      scheduled: { shutdown: false },
      version: d.row.version,
    };
  };

  const desktopItem = async (desktopId: string): Promise<DeploymentDesktop | undefined> => {
    const row = await app.desktops.table.get(desktopId);
    if (!row?.tag) return undefined;
    const named = (await app.deployments.desktopsOf(row.tag)).find((d) => d.row.id === desktopId);
    return named ? desktopItemOf(named) : undefined;
  };

  return { listItem, itemOf, desktopItemOf, desktopItem };
}
