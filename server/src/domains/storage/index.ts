/** The storage domain's only door: what other domains and the app composition use. */
export { default as storagePlugin } from './plugin.ts';
export { default as storageRoutes } from './routes.ts';
export { checkDisks } from './disk-check.ts';
