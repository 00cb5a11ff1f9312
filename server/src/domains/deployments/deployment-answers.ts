/**
 * The answer shapes of deployments: the list item and the detail (the stored and computed
 * properties by the generated mappers, then the desktop counters and the booking state), a
 * deployment desktop, a person.
 */
import type { FastifyInstance } from 'fastify';
import { eq } from 'drizzle-orm';
import {
  deploymentComputedToWire,
  deploymentReadToWire,
  deployments,
  deploymentToDetail,
  type DeploymentReadRow,
  type DeploymentRow,
} from '../../platform/db/schema.ts';
import { ApiError } from '../../platform/http/api-error.ts';
import { stockImageOf, toWire } from '../desktops/index.ts';
import { configuredViewers } from '../../../../common/viewers.ts';
import type {
  Deployment,
  DeploymentDesktop,
  DeploymentDetail,
  DeploymentPerson,
} from '../../../../src/generated/types.ts';
import { NO_DESKTOPS, type DeploymentCounts } from './deployments-repository.ts';

/** The booking fields of a deployment's answers. */
export interface DeploymentBookingState {
  needs_booking: boolean;
  booking_id: string | false;
  next_booking_start: string | null;
  next_booking_end: string | null;
}

/** The booking state of a deployment nobody booked. */
const NOT_BOOKED: DeploymentBookingState = {
  needs_booking: false,
  booking_id: false,
  next_booking_start: null,
  next_booking_end: null,
};

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
  /** The row with its computed properties; a deployment gone meanwhile is not found. */
  const readRow = async (row: DeploymentRow): Promise<DeploymentReadRow> => {
    const [read] = await app.deployments.read(eq(deployments.id, row.id));
    if (!read) throw new ApiError('not_found', 'Deployment not found', 'not_found');
    return read;
  };

  /** What a deployment's answers add to its properties: the desktop counters and bookings. */
  const stateOf = async (row: DeploymentReadRow) => ({
    ...NO_DESKTOPS,
    ...(await app.deployments.counts([row.id])).get(row.id),
    ...NOT_BOOKED,
    ...(await app.bookingService.deploymentBookings([row])).get(row.id),
  });

  const listItem = async (row: DeploymentRow): Promise<Deployment> => {
    const read = await readRow(row);
    return { ...deploymentReadToWire(read), ...(await stateOf(read)) };
  };

  /** The list item of a row read with its computed properties, its counters and bookings. */
  const itemOf = (
    row: DeploymentReadRow,
    counts: DeploymentCounts | undefined,
    booking: DeploymentBookingState | undefined,
  ): Deployment => ({
    ...deploymentReadToWire(row),
    ...NO_DESKTOPS,
    ...counts,
    ...NOT_BOOKED,
    ...booking,
  });

  /** The detail: its own stored and computed properties, counters, bookings, desktops and owner. */
  const detailOf = async (row: DeploymentRow): Promise<DeploymentDetail> => {
    const read = await readRow(row);
    const named = await app.deployments.desktopsOf(row.id);
    const [owner] = await app.directory.usersByIds([row.userId]);
    return {
      ...deploymentToDetail(read),
      ...deploymentComputedToWire(read),
      ...(await stateOf(read)),
      desktops: named.map(desktopItemOf),
      ...(owner ? { owner: person(owner) } : {}),
    };
  };

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

  return { listItem, itemOf, detailOf, desktopItemOf, desktopItem };
}
