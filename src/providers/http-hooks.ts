import type { ApiError } from './api-error';

/** Hooks the application wires in (logout, navigation, expired-session modal). */
export interface HttpHooks {
  /** A 401, with the token the request carried (null: it carried none). */
  onUnauthorized: (error: ApiError, token: string | null) => void;
  onServerError: (error: ApiError) => void;
  onMaintenance: (error: ApiError) => void;
  onRenewFailed: () => void;
  onTokenRenewed: (token: string) => void;
}

const noop = (): void => undefined;
let hooks: HttpHooks = {
  onUnauthorized: noop,
  onServerError: noop,
  onMaintenance: noop,
  onRenewFailed: noop,
  onTokenRenewed: noop,
};

/** Wires the application reactions; returns the previous hooks (tests restore them). */
export function configureHttpClient(next: Partial<HttpHooks>): HttpHooks {
  const previous = hooks;
  hooks = { ...hooks, ...next };
  return previous;
}

/** The application reactions wired in now. */
export function httpHooks(): HttpHooks {
  return hooks;
}
