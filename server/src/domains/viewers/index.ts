/** The viewers domain's only door: what other domains and the app composition use. */
export { default as viewersPlugin } from './plugin.ts';
export { default as directViewerRoutes } from './routes.ts';
