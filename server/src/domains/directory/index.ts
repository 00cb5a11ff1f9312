/** The directory domain's only door: what other domains and the app composition use. */
export { appendAudit } from './audit.ts';
export { DIRECTORY_SEARCH_LIMIT, default as directoryRepository } from './directory-repository.ts';
export type { DirectoryUser } from './directory-repository.ts';
export { default as directoryPlugin } from './plugin.ts';
export { default as adminAuditRoutes } from './routes/audit.ts';
export { default as adminCategoryRoutes } from './routes/categories.ts';
export { default as adminGroupRoutes } from './routes/groups.ts';
export { default as adminLdapProviderRoutes } from './routes/ldap-providers.ts';
export { applyConfigProviders, readConfigProvidersFile } from './config-providers.ts';
export type { ConfigProvider } from './config-providers.ts';
export { default as adminNodeRoutes } from './routes/nodes.ts';
export { enabledLdapDirectory, enabledLdapLabels, ldapSiblings } from './ldap-providers.ts';
export type { LdapDirectory } from './ldap-providers.ts';
export { default as adminOidcProviderRoutes } from './routes/oidc-providers.ts';
export { enabledOidcButtons, enabledOidcProvider, oidcSiblings } from './oidc-providers.ts';
export type { OidcIssuerConfig } from './oidc-providers.ts';
export { default as adminSamlProviderRoutes } from './routes/saml-providers.ts';
export {
  categorySamlProvider,
  enabledSamlButtons,
  enabledSamlProvider,
  samlProvidersOfIdp,
  samlSiblings,
} from './saml-providers.ts';
export type { SamlProviderConfig } from './saml-providers.ts';
export { default as roleVisibilityRoutes } from './routes/role-visibility.ts';
export { default as adminSettingsRoutes } from './routes/settings.ts';
export { default as adminUserRoutes } from './routes/users.ts';
export { default as usersRepository } from './users-repository.ts';
export type { CategoryRow } from './users-repository.ts';
export { userWrites } from './user-writes.ts';
export type { PasswordChange, ProfileChange, VpnKeys } from './user-writes.ts';
