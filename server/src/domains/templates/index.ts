/** The templates domain's only door: what other domains and the app composition use. */
export { default as catalogRepositories } from './catalog-repositories.ts';
export { default as templatesPlugin } from './plugin.ts';
export { default as templateRoutes } from './routes.ts';
export { templateItem } from './template-service.ts';
