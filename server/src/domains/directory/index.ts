/** The directory domain's only door: what other domains and the app composition use. */
export { appendAudit } from './audit.ts';
export { DIRECTORY_SEARCH_LIMIT, default as directoryRepository } from './directory-repository.ts';
export type { DirectoryUser } from './directory-repository.ts';
export { default as directoryPlugin } from './plugin.ts';
export { default as adminAuditRoutes } from './routes/audit.ts';
export { default as adminCategoryRoutes } from './routes/categories.ts';
export { default as adminGroupRoutes } from './routes/groups.ts';
export { default as adminLdapProviderRoutes } from './routes/ldap-providers.ts';
export { enabledLdapDirectory, enabledLdapLabels } from './ldap-providers.ts';
export type { LdapDirectory } from './ldap-providers.ts';
export { default as roleVisibilityRoutes } from './routes/role-visibility.ts';
export { default as adminSettingsRoutes } from './routes/settings.ts';
export { default as adminUserRoutes } from './routes/users.ts';
export { default as usersRepository } from './users-repository.ts';
export type { CategoryRow } from './users-repository.ts';
export { userWrites } from './user-writes.ts';
export type { PasswordChange, ProfileChange, VpnKeys } from './user-writes.ts';
