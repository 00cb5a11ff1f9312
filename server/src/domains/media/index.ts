/** The media domain's only door: what other domains and the app composition use. */
export { default as mediaUsageRepository } from './media-usage-repository.ts';
export { default as mediaPlugin } from './plugin.ts';
export { default as mediaRoutes } from './routes/media.ts';
export { default as templatesMediaRoutes } from './routes/templates-media.ts';
