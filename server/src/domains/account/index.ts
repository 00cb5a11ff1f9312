/** The account domain's only door: what other domains and the app composition use. */
export { default as mailer } from './mailer.ts';
export { default as accountRoutes } from './routes/account.ts';
export { default as authenticationRoutes } from './routes/authentication.ts';
export { default as configRoutes } from './routes/config.ts';
export { default as sessionRoutes } from './routes/session.ts';
export { default as vpnEndpoint } from './vpn-endpoint.ts';
