/** The desktops domain's only door: what other domains and the app composition use. */
export { prepareCardImage, releaseCardImages } from './card-images.ts';
export { createReferenceCheck } from './desktop-references.ts';
export { assertStateAllows, checkViewers, profilesOf } from './desktop-rules.ts';
export { NEW_DESKTOP_HARDWARE } from './desktop-hardware.ts';
export { VIEWER_STATES } from './desktop-viewing.ts';
export { default as desktopsRepository, stockImageOf, toWire } from './desktops-repository.ts';
export type { OwnedDesktopRow } from './desktops-repository.ts';
export { MEDIA_INSTALLS } from './media-installs.ts';
export { networkItems, vpnNetwork } from './networks.ts';
export { default as desktopsPlugin } from './plugin.ts';
export { default as adminHypervisorRoutes } from './routes/hypervisors.ts';
export { default as adminNetworkRoutes } from './routes/networks.ts';
export { default as allowedRoutes } from './routes/allowed.ts';
export { default as desktopLifecycleRoutes } from './routes/lifecycle.ts';
export type { EngineDesktop } from './types.ts';
