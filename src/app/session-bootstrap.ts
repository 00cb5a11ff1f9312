/**
 * Session bootstrap run by the guard once per session: fetch the user,
 * open the live socket, fetch the config once (migrations_block -> /export-user) and the
 * recycle-bin maximum time when that operation exists, then the status bar and, once per login
 * session, the notifications of the login trigger. A desktop start (the desktops' `start`
 * action, from any screen) shows the notifications of the start trigger, and `msg` events show
 * as toasts.
 */
import { operations } from '@/generated/api';
import type { SocketEventsMessage } from '@/generated/types';
import type { wireByName } from '@/generated/events';
import { callIsAction } from '@common/state-actions';
import { showMessageToast } from '@/features/notifications/message-toast';
import {
  clearUserNotifications,
  loadStatusBar,
  showTriggeredNotifications,
} from '@/features/notifications/user-notifications';
import { changeLanguage, i18next } from '@/i18n/i18n';
import { matchLanguage } from '@/i18n/languages';
import { navigateTo } from '@/lib/navigation';
import { setRoleVisibility } from '@/lib/role-visibility';
import { getSessionState, updateSessionState } from '@/lib/session-state';
import { closeSocket, openSocket } from '@/lib/socket';
import { decodeToken, getToken } from '@/lib/token';
import { isApiError, onOperationSuccess, request, usableTokenNow } from '@/providers/http-client';
import { logout, onLogout } from '@/providers/auth-provider';
import type { PortalLiveProvider } from '@/providers/live-provider';
import { dropLandingAnswersOnConnect, landingPreviewSettled } from './landing-prefetch';
import { queryClient } from './query-client';

/** The internal name of the `msg` event (messages pushed to the user). */
const MESSAGE_EVENT: keyof typeof wireByName = 'messages.received';
/** The internal name of the `role_visibility` event (the admin changed who sees what). */
const ROLE_VISIBILITY_EVENT: keyof typeof wireByName = 'roleVisibility.changed';
/** Where the login notifications of a login session are remembered as shown (per tab). */
const LOGIN_NOTIFIED_KEY = 'notifications:login';

let running: Promise<void> | null = null;
let liveProvider: PortalLiveProvider | null = null;

onLogout(() => {
  running = null;
  closeSocket();
  setRoleVisibility(null);
  queryClient.clear();
  clearUserNotifications();
});

// After every successful desktop start, wherever it came from (the Open button, the start action).
onOperationSuccess((key, params) => {
  if (callIsAction('desktops', 'start', key, params))
    void showTriggeredNotifications('start_desktop', ['modal']);
});

/** Registers the live provider the socket feeds; its `msg` events become toasts. */
export function setBootstrapLiveProvider(provider: PortalLiveProvider): void {
  liveProvider = provider;
  provider.subscribe({
    channel: MESSAGE_EVENT,
    types: ['*'],
    callback: (event) => showMessageToast(event.payload as unknown as SocketEventsMessage),
  });
  // The admin changed who sees what: read this role's visibility again, then the data (the
  // server now leaves out, or sends again, the fields it concerns).
  provider.subscribe({
    channel: ROLE_VISIBILITY_EVENT,
    types: ['*'],
    callback: () => void loadRoleVisibility().then(() => queryClient.invalidateQueries()),
  });
}

/** Reads the signed-in role's visibility (the generated tables decide while it fails). */
export async function loadRoleVisibility(): Promise<void> {
  try {
    setRoleVisibility(await request('roleVisibility.mine'));
  } catch (error) {
    console.warn('role visibility', error);
  }
}

/** The login notifications, once per login session (a reload does not show them again). */
function showLoginNotifications(): void {
  const session = decodeToken(getToken())?.session_id ?? '';
  try {
    if (sessionStorage.getItem(LOGIN_NOTIFIED_KEY) === session) return;
    sessionStorage.setItem(LOGIN_NOTIFIED_KEY, session);
  } catch {
    // storage unavailable: shown on each start of the application
  }
  void showTriggeredNotifications('login', ['modal', 'fullpage']);
}

/** Re-fetches the user and config (after a renewal). */
export async function refreshSession(): Promise<void> {
  const [user, config] = await Promise.all([request('session.user'), request('config.show')]);
  updateSessionState({ ...(user ? { user } : {}), ...(config ? { config } : {}) });
}

/** Opens the live socket (once per session: a second call keeps the open one). */
function connectLive(): void {
  openSocket({
    getToken,
    onEvent: (wire, payload) => liveProvider?.dispatch(wire, payload),
    onConnect: () => {
      // Answers read ahead of the socket may predate an event it would have carried.
      dropLandingAnswersOnConnect();
      liveProvider?.resync();
    },
    onFatal: (_message, token) => void logout(token),
    // After a transport error: a 401 ends the session (the HTTP client logs out on it too);
    // no answer at all is the network still being down.
    checkSession: () =>
      request('session.user', { background: true }).then(
        () => true,
        (error: unknown) => !(isApiError(error) && error.statusCode === 401),
      ),
  });
}

async function run(): Promise<void> {
  // The socket listens before the first screen is drawn, so that a change made as it appears
  // reaches it as an event (not only through the lists read again at the connect). A token due
  // for renewal is renewed by the first reads first: the handshake would refuse it.
  if (usableTokenNow()) connectLive();
  const known = getSessionState();
  // The first screen's reads (sent ahead at the sign-in) go out together, and the guard draws the
  // shell once they are all there: in the user's saved language, with the navbar their role sees
  // and their config's entries, not once per answer; on the home page with its first records.
  const configRead = known.config ? Promise.resolve(known.config) : request('config.show');
  const [user, configAnswer] = await Promise.all([
    known.user ?? request('session.user'),
    configRead.then(
      (config) => ({ config }),
      (error: unknown) => ({ error }),
    ),
    loadRoleVisibility(),
    landingPreviewSettled(window.location.pathname),
  ]);
  // The language saved on the server follows the user to any browser.
  const saved = matchLanguage(user?.lang ?? null);
  if (saved && saved !== i18next.language) await changeLanguage(saved);
  // Without its config the shell still shows; the next navigation's bootstrap reads it again.
  const config = 'config' in configAnswer ? configAnswer.config : null;
  updateSessionState(config ? { user, config } : { user });
  connectLive();
  if ('error' in configAnswer) throw configAnswer.error;
  if (config?.migrations_block) navigateTo('/export-user', { replace: true });
  // The maximum recycle-bin time, when this installation has the call.
  if (!operations['recycle-bins.cutoffTime'].planned) {
    request('recycle-bins.cutoffTime')
      .then((value) => updateSessionState({ recycleBinCutoff: value }))
      .catch((error: unknown) => console.warn('recycle-bin cutoff', error));
  }
  void loadStatusBar();
  showLoginNotifications();
}

/** Runs the bootstrap once per session; concurrent callers share it. */
export function bootstrapSession(): Promise<void> {
  running ??= run().catch((error: unknown) => {
    running = null;
    throw error;
  });
  return running;
}
