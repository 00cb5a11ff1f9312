/**
 * The bastion: the target service (`app.bastion`), the HTTP bastion (by Host, on the portal's
 * port), and when their ports are set the SSH bastion (BASTION_SSH_PORT) and the HTTPS
 * passthrough (BASTION_HTTPS_PORT), started when the app is ready and closed with it
 * (`app.bastionPorts` says where they listen).
 */
import type { FastifyPluginAsync } from 'fastify';
import { globalPlugin } from '../../platform/lib/plugin.ts';
import { createBastionService, type BastionService } from './bastion-service.ts';
import { hostKeyFile, portalKeyFile, sshKeyPair } from './bastion-keys.ts';
import { registerHttpBastion } from './http-bastion.ts';
import { startSshBastion, type SshBastion } from './ssh-bastion.ts';
import { reachByName, startTlsBastion, type TlsBastion } from './tls-bastion.ts';

declare module 'fastify' {
  interface FastifyInstance {
    bastion: BastionService;
    /** the ports the SSH bastion and the HTTPS passthrough listen on, while they do */
    bastionPorts: { ssh: number | undefined; https: number | undefined };
  }
}

const plugin: FastifyPluginAsync = async (app) => {
  app.decorate('bastion', createBastionService(app));
  registerHttpBastion(app);
  const ports: { ssh: number | undefined; https: number | undefined } = {
    ssh: undefined,
    https: undefined,
  };
  app.decorate('bastionPorts', ports);
  const { sshPort, httpsPort } = app.config.bastion;
  let ssh: SshBastion | undefined;
  let tls: TlsBastion | undefined;
  app.addHook('onReady', async () => {
    if (sshPort !== undefined) {
      ssh = await startSshBastion(app, {
        host: app.config.host,
        port: sshPort,
        hostKey: await sshKeyPair(hostKeyFile(app.config), 'vdi-portal bastion host'),
        portalKey: await sshKeyPair(portalKeyFile(app.config), 'vdi-portal bastion'),
      });
      ports.ssh = ssh.port;
    }
    if (httpsPort !== undefined) {
      tls = await startTlsBastion({
        host: app.config.host,
        port: httpsPort,
        reach: reachByName(app),
      });
      ports.https = tls.port;
    }
  });
  app.addHook('onClose', async () => {
    await Promise.all([ssh?.close(), tls?.close()]);
    ports.ssh = undefined;
    ports.https = undefined;
  });
};

export default globalPlugin(plugin, 'bastion');
