/** The notifications domain's only door: what other domains and the app composition use. */
export { default as notificationRoutes } from './routes.ts';
