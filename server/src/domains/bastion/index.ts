/** The bastion domain's only door: what other domains and the app composition use. */
export { bastionRights } from './bastion-rights.ts';
export { portalKeyFile, sshKeyPair } from './bastion-keys.ts';
export { default as bastionPlugin } from './plugin.ts';
export { default as bastionRoutes } from './routes.ts';
