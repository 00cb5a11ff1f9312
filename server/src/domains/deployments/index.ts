/** The deployments domain's only door: what other domains and the app composition use. */
export { assertDeploymentRight, audienceOf } from './deployment-access.ts';
export type { DeploymentBookingState } from './deployment-answers.ts';
export { default as deploymentsRepository } from './deployments-repository.ts';
export { default as deploymentsPlugin } from './plugin.ts';
export { default as deploymentRoutes } from './routes.ts';
