/**
 * Reading deployments: the list (owned and co-owned), the detail with its desktops, the edit form
 * (its stored fields by the generated mapper, then the create dict and the expanded targets), and
 * the direct-viewer CSV of its desktops.
 */
import type { AuthContext } from '../../platform/auth/auth.ts';
import type {
  AllowedExpanded,
  Deployment,
  DeploymentDetail,
  DeploymentInfo,
} from '../../../../src/generated/types.ts';
import { deploymentToInfo } from '../../platform/db/schema.ts';
import { csvFile, csvFileName } from '../../platform/lib/csv-file.ts';
import type { DeploymentDeps } from './deployment-deps.ts';

export function deploymentReads({
  app,
  answers,
  deploymentFor,
}: Pick<DeploymentDeps, 'app' | 'answers' | 'deploymentFor'>) {
  const { itemOf, detailOf } = answers;

  return {
    /** GET /deployments: owned and co-owned, by name descending. */
    async list(auth: AuthContext): Promise<Deployment[]> {
      const rows = await app.deployments.ownedOrCoOwnedBy(auth.userId);
      const counts = await app.deployments.counts(rows.map((r) => r.id));
      const booked = await app.bookingService.deploymentBookings(rows);
      return rows
        .map((r) => itemOf(r, counts.get(r.id), booked.get(r.id)))
        .sort((a, b) => b.name.localeCompare(a.name) || b.id.localeCompare(a.id));
    },

    async show(auth: AuthContext, id: string): Promise<DeploymentDetail> {
      return detailOf(await deploymentFor(auth, id));
    },

    async info(auth: AuthContext, id: string): Promise<DeploymentInfo> {
      const row = await deploymentFor(auth, id);
      const dict = row.createDict;
      const groupIds = row.allowed.groups || [];
      const userIds = row.allowed.users || [];
      const [groups, people] = await Promise.all([
        app.directory.groupsByIds(groupIds),
        app.directory.usersByIds(userIds),
      ]);
      const allowed: AllowedExpanded = {
        roles: false,
        categories: false,
        groups:
          row.allowed.groups === false || row.allowed.groups === undefined
            ? false
            : groups.map((g) => ({
                id: g.id,
                name: g.name,
                uid: g.id,
                parent_category: g.categoryId,
                category_name: g.categoryName,
              })),
        users:
          row.allowed.users === false || row.allowed.users === undefined
            ? false
            : people.map((u) => ({
                id: u.id,
                name: u.name,
                uid: u.uid,
                group_name: u.groupName,
                category_name: u.categoryName,
              })),
      };
      return {
        // every stored field of the edit form, by the generated mapper (a field added to the
        // schema with `x-in` arrives here too); then what the desktops are made with
        ...deploymentToInfo(row),
        description: dict.description ?? row.description,
        template: row.templateId,
        ...(dict.guest_properties ? { guest_properties: dict.guest_properties } : {}),
        ...(dict.image ? { image: dict.image } : {}),
        hardware: (dict.hardware ?? {}) as DeploymentInfo['hardware'],
        ...(dict.hardware?.reservables ? { reservables: dict.hardware.reservables } : {}),
        allowed,
        limited_hardware: null,
      };
    },

    /**
     * GET /deployments/directviewer_csv/{id}: every desktop gets a NEW direct-viewer link (links
     * are kept only hashed, so a link can be written down only when it is made): downloading the
     * file ends the links of any earlier download.
     */
    async directViewerCsv(
      auth: AuthContext,
      id: string,
    ): Promise<{ filename: string; content: string }> {
      const row = await deploymentFor(auth, id);
      const present = await app.deployments.desktopsOf(row.id);
      const lines: string[][] = [];
      for (const d of present) {
        const token = await app.directViewer.issue(d.row.id);
        lines.push([
          d.username ?? '',
          d.userName ?? '',
          d.email ?? '',
          app.directViewer.linkUrl(token),
        ]);
      }
      app.log.info(
        { deployment: row.id, agent: auth.userId, links: lines.length },
        'direct-viewer links issued',
      );
      return {
        filename: csvFileName(row.id),
        content: csvFile(['username', 'name', 'email', 'url'], lines),
      };
    },
  };
}
