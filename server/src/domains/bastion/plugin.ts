/**
 * The bastion: the target service (`app.bastion`), the HTTP bastion (by Host, on the portal's
 * port) and, when BASTION_SSH_PORT is set, the SSH bastion on that port (started when the app is
 * ready, closed with it; `app.bastionSsh.port` is the port it listens on).
 */
import type { FastifyPluginAsync } from 'fastify';
import { globalPlugin } from '../../platform/lib/plugin.ts';
import { createBastionService, type BastionService } from './bastion-service.ts';
import { hostKeyFile, portalKeyFile, sshKeyPair } from './bastion-keys.ts';
import { registerHttpBastion } from './http-bastion.ts';
import { startSshBastion, type SshBastion } from './ssh-bastion.ts';

declare module 'fastify' {
  interface FastifyInstance {
    bastion: BastionService;
    /** the SSH bastion's port while it listens */
    bastionSsh: { port: number | undefined };
  }
}

const plugin: FastifyPluginAsync = async (app) => {
  app.decorate('bastion', createBastionService(app));
  registerHttpBastion(app);
  const state: { port: number | undefined } = { port: undefined };
  app.decorate('bastionSsh', state);
  const port = app.config.bastion.sshPort;
  if (port === undefined) return;
  let ssh: SshBastion | undefined;
  app.addHook('onReady', async () => {
    ssh = await startSshBastion(app, {
      host: app.config.host,
      port,
      hostKey: sshKeyPair(hostKeyFile(app.config), 'vdi-portal bastion host'),
      portalKey: sshKeyPair(portalKeyFile(app.config), 'vdi-portal bastion'),
    });
    state.port = ssh.port;
  });
  app.addHook('onClose', async () => {
    await ssh?.close();
    state.port = undefined;
  });
};

export default globalPlugin(plugin, 'bastion');
