/** The caller's WireGuard VPN: the client configuration file and a key reset. */
import type { FastifyInstance } from 'fastify';
import { route } from '../../../platform/http/route.ts';
import { authOf } from '../../../platform/auth/auth.ts';
import { createVpnService } from '../vpn-service.ts';

export default async function vpnRoutes(app: FastifyInstance) {
  const vpn = createVpnService(app);

  route(app, 'profile.vpnConfig', async (request) => {
    const auth = authOf(request);
    return {
      kind: 'file',
      name: 'isard-vpn',
      ext: 'conf',
      mime: 'text/plain',
      content: await vpn.clientConfig(auth.userId, request.host),
    };
  });

  route(app, 'profile.resetVpn', async (request) => {
    await vpn.reset(authOf(request).userId);
    return {};
  });
}
