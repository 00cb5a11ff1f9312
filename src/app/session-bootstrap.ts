/**
 * Session bootstrap run by the guard once per session: fetch the user,
 * open the live socket, fetch the config once (migrations_block -> /export-user) and the
 * recycle-bin maximum time when that operation exists.
 */
import { operations } from '@/generated/api';
import { navigateTo } from '@/lib/navigation';
import { getSessionState, updateSessionState } from '@/lib/session-state';
import { closeSocket, openSocket } from '@/lib/socket';
import { getToken } from '@/lib/token';
import { request } from '@/providers/http-client';
import { logout, onLogout } from '@/providers/auth-provider';
import type { PortalLiveProvider } from '@/providers/live-provider';
import { queryClient } from './query-client';

let running: Promise<void> | null = null;
let liveProvider: PortalLiveProvider | null = null;

onLogout(() => {
  running = null;
  closeSocket();
  queryClient.clear();
});

/** Registers the live provider the socket feeds. */
export function setBootstrapLiveProvider(provider: PortalLiveProvider): void {
  liveProvider = provider;
}

/** Re-fetches the user and config (after a renewal). */
export async function refreshSession(): Promise<void> {
  const [user, config] = await Promise.all([request('session.user'), request('config.show')]);
  updateSessionState({ ...(user ? { user } : {}), ...(config ? { config } : {}) });
}

async function run(): Promise<void> {
  if (!getSessionState().user) {
    const user = await request('session.user');
    updateSessionState({ user });
  }
  openSocket({
    getToken,
    onEvent: (wire, payload) => liveProvider?.dispatch(wire, payload),
    onReconnect: () => liveProvider?.resync(),
    onFatal: () => void logout(),
  });
  if (!getSessionState().config) {
    const config = await request('config.show');
    updateSessionState({ config });
    if (config?.migrations_block) navigateTo('/export-user', { replace: true });
  }
  // The maximum recycle-bin time, when this installation has the call.
  if (!operations['recycle-bins.cutoffTime'].planned) {
    request('recycle-bins.cutoffTime')
      .then((value) => updateSessionState({ recycleBinCutoff: value }))
      .catch((error: unknown) => console.warn('recycle-bin cutoff', error));
  }
}

/** Runs the bootstrap once per session; concurrent callers share it. */
export function bootstrapSession(): Promise<void> {
  running ??= run().catch((error: unknown) => {
    running = null;
    throw error;
  });
  return running;
}
