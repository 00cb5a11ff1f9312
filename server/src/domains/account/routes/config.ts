/** GET /api/v3/user/config: every field of schema/entities/config.schema.json. */
import type { FastifyInstance } from 'fastify';
import { route } from '../../../platform/http/route.ts';
import { authOf } from '../../../platform/auth/auth.ts';
import type { UserConfig } from '../../../../../src/generated/types.ts';
import { hasRoleAtLeast, role } from '../../../../../src/generated/policy.ts';
import { bastionRights } from '../../bastion/index.ts';

const epoch = (d: Date) => Math.floor(d.getTime() / 1000);

export default async function configRoutes(app: FastifyInstance) {
  route(app, 'config.show', async (request) => {
    const auth = authOf(request);
    const s = await app.settings.all();
    const bastion = bastionRights(s, auth.role);
    const config: UserConfig = {
      show_bookings_button: hasRoleAtLeast(auth.role, role.admin) || s.show_bookings_button,
      documentation_url: s.documentation_url,
      viewers_documentation_url: s.viewers_documentation_url,
      show_temporal_tab: s.show_temporal_tab,
      // Only local accounts own their address (other providers bring theirs).
      show_change_email_button: auth.provider === 'local',
      http_port: String(s.http_port),
      https_port: String(s.https_port),
      bastion_domain: bastion.domain,
      // The port users dial: the configured one, else the SSH bastion's, else the HTTPS port.
      bastion_ssh_port: bastion.use
        ? String(s.bastion.ssh_port ?? app.config.bastion.sshPort ?? s.https_port)
        : null,
      can_use_bastion: bastion.use,
      can_use_bastion_individual_domains: bastion.individualDomains,
      migrations_block: s.migration.force && !s.migration.force_exceptions.includes(auth.role),
      desktop_shutdown_timeout: Math.ceil(app.config.shutdownGraceMs / 1000),
      session: {
        id: auth.sessionId,
        max_renew_time: epoch(auth.session.maxRenewAt),
        max_time: epoch(auth.session.maxAt),
      },
    };
    return config;
  });
}
