/**
 * The browser RDP connection of the `/rdp` page: reads the viewer cookie (which desktop), asks
 * for a NEW single-use ticket for each connection (`desktops.viewer`, `browser-rdp`), opens the
 * Guacamole client on the server's websocket tunnel with the window's size, dpi and time zone,
 * wires keyboard, mouse and resizing, and reports its status. A failure of the RDP service is
 * retried (at most MAX_RDP_RETRIES times, "retrying N of max"), then reported as "RDP service not
 * running"; a refusal of the portal (a code of the error catalogue) is shown as it is.
 * Only loaded in the RDP page's lazy chunk.
 */
import { useCallback, useEffect, useRef, useState, type RefObject } from 'react';
import Guacamole from 'guacamole-common-js';
import { readRdpCookie } from './rdp-cookie';
import { fetchViewer, isBrowserViewer, websocketUrl, type ViewerAnswer } from './viewer-api';

export type RdpStatus =
  | 'connecting'
  | 'connected'
  | 'unstable'
  | 'retrying'
  | 'disconnected'
  | 'error'
  | 'serviceNotRunning'
  | 'cookieNotSet'
  | 'cookieExpired';

export const MAX_RDP_RETRIES = 3;
const RETRY_DELAY_MS = 2000;

/** Errors of the tunnel that retrying cannot mend (the portal refused: a catalogue code). */
const FINAL_CODES = new Set(['viewer_no_address', 'viewer_not_started', 'rdp_connection_refused']);

/** Guacamole client states (Guacamole.Client.State). */
const CLIENT_CONNECTED = 3;
const CLIENT_DISCONNECTED = 5;
/** Guacamole tunnel states (Guacamole.Tunnel.State). */
const TUNNEL_OPEN = 1;
const TUNNEL_UNSTABLE = 3;

export interface RdpConnection {
  status: RdpStatus;
  /** The desktop's name, from the cookie. */
  name: string;
  /** The failure shown in status `error` (an API error or `{ description_code }`). */
  error: unknown;
  /** The attempt being retried (1…MAX_RDP_RETRIES) in status `retrying`. */
  attempt: number;
  client: Guacamole.Client | null;
  connect: () => void;
  disconnect: () => void;
}

/** Asks for a new RDP ticket of a desktop. */
export type RdpTicketFetcher = (id: string) => Promise<ViewerAnswer>;

const desktopTicket: RdpTicketFetcher = (id) => fetchViewer(id, 'browser-rdp');

/** The Guacamole connect data: the ticket, the screen, its dpi and the time zone. */
export function connectData(ticket: string, width: number, height: number, dpi: number): string {
  const params = new URLSearchParams({
    ticket,
    width: String(Math.round(width)),
    height: String(Math.round(height)),
    dpi: String(Math.round(dpi)),
  });
  const timezone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  if (timezone) params.set('timezone', timezone);
  return params.toString();
}

export function useRdpConnection(
  target: RefObject<HTMLDivElement | null>,
  fetchTicket: RdpTicketFetcher = desktopTicket,
): RdpConnection {
  const [status, setStatus] = useState<RdpStatus>('connecting');
  const [name, setName] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [attempt, setAttempt] = useState(0);
  const [client, setClient] = useState<Guacamole.Client | null>(null);
  const generation = useRef(0);
  const retries = useRef(0);
  const cleanup = useRef<(() => void) | null>(null);
  const fetchTicketRef = useRef(fetchTicket);
  const reopenRef = useRef<(() => Promise<void>) | null>(null);

  const teardown = useCallback(() => {
    const done = cleanup.current;
    cleanup.current = null;
    setClient(null);
    done?.();
  }, []);

  const open = useCallback(async () => {
    const screen = target.current;
    if (!screen) return;
    const run = ++generation.current;
    teardown();
    setError(null);
    const cookie = readRdpCookie();
    if (cookie.state === 'missing') return setStatus('cookieNotSet');
    setName(cookie.cookie.vmName);
    if (cookie.state === 'expired') return setStatus('cookieExpired');
    if (retries.current === 0) setStatus('connecting');
    let answer: ViewerAnswer;
    try {
      answer = await fetchTicketRef.current(cookie.cookie.desktop);
    } catch (failure) {
      if (run !== generation.current) return;
      setError(failure);
      setStatus('error');
      return;
    }
    if (run !== generation.current || !target.current) return;
    if (!isBrowserViewer(answer)) {
      setStatus('error');
      return;
    }
    const [path = '', query = ''] = answer.url.split('?');
    const ticket = new URLSearchParams(query).get('ticket') ?? '';
    const tunnel = new Guacamole.WebSocketTunnel(websocketUrl(path));
    const guac = new Guacamole.Client(tunnel);
    const display = guac.getDisplay();
    const element = display.getElement();
    screen.replaceChildren(element);

    // Fits the remote screen into the page (never enlarged).
    const fit = (): void => {
      const width = display.getWidth();
      const height = display.getHeight();
      if (!width || !height) return;
      display.scale(Math.min(1, screen.clientWidth / width, screen.clientHeight / height));
    };
    display.onresize = fit;
    let resizeTimer: ReturnType<typeof setTimeout> | undefined;
    const observer = new ResizeObserver(() => {
      fit();
      clearTimeout(resizeTimer);
      resizeTimer = setTimeout(() => {
        if (screen.clientWidth > 0 && screen.clientHeight > 0)
          guac.sendSize(screen.clientWidth, screen.clientHeight);
      }, 300);
    });
    observer.observe(screen);

    const mouse = new Guacamole.Mouse(element);
    mouse.onEach(['mousedown', 'mousemove', 'mouseup'], (event) => {
      guac.sendMouseState((event as Guacamole.Mouse.Event).state, true);
    });
    const keyboard = new Guacamole.Keyboard(document);
    keyboard.onkeydown = (keysym) => {
      guac.sendKeyEvent(1, keysym);
      return false;
    };
    keyboard.onkeyup = (keysym) => guac.sendKeyEvent(0, keysym);

    let failed = false;
    let connected = false;
    guac.onerror = (failure) => {
      if (run !== generation.current) return;
      failed = true;
      const code = failure.message ?? '';
      if (FINAL_CODES.has(code)) {
        setError({ description_code: code, params: null });
        setStatus('error');
        return;
      }
      if (retries.current < MAX_RDP_RETRIES) {
        retries.current += 1;
        setAttempt(retries.current);
        setStatus('retrying');
        setTimeout(() => {
          if (run === generation.current) void reopenRef.current?.();
        }, RETRY_DELAY_MS);
        return;
      }
      setStatus('serviceNotRunning');
    };
    tunnel.onstatechange = (state) => {
      if (run !== generation.current || failed) return;
      if (state === TUNNEL_UNSTABLE) setStatus('unstable');
      else if (state === TUNNEL_OPEN && connected) setStatus('connected');
    };
    guac.onstatechange = (state) => {
      if (run !== generation.current || failed) return;
      connected = state === CLIENT_CONNECTED;
      if (state === CLIENT_CONNECTED) {
        retries.current = 0;
        setAttempt(0);
        setStatus('connected');
      } else if (state === CLIENT_DISCONNECTED) setStatus('disconnected');
    };

    cleanup.current = () => {
      guac.onerror = null;
      guac.onstatechange = null;
      tunnel.onstatechange = null;
      keyboard.onkeydown = null;
      keyboard.onkeyup = null;
      keyboard.reset();
      observer.disconnect();
      clearTimeout(resizeTimer);
      try {
        guac.disconnect();
      } catch {
        // already closed
      }
      element.remove();
    };
    setClient(guac);
    guac.connect(
      connectData(
        ticket,
        screen.clientWidth || window.innerWidth,
        screen.clientHeight || window.innerHeight,
        96 * (window.devicePixelRatio || 1),
      ),
    );
  }, [target, teardown]);

  useEffect(() => {
    reopenRef.current = open;
  }, [open]);

  useEffect(() => {
    fetchTicketRef.current = fetchTicket;
  }, [fetchTicket]);

  useEffect(() => {
    retries.current = 0;
    // Connect after the commit; a mount undone at once (StrictMode) never asks for a ticket.
    const mounted = generation.current;
    queueMicrotask(() => {
      if (generation.current === mounted) void open();
    });
    return () => {
      generation.current += 1;
      teardown();
    };
  }, [open, teardown]);

  const connect = useCallback(() => {
    retries.current = 0;
    setAttempt(0);
    setStatus('connecting');
    void open();
  }, [open]);

  const disconnect = useCallback(() => {
    generation.current += 1;
    teardown();
    setStatus('disconnected');
  }, [teardown]);

  return { status, name, error, attempt, client, connect, disconnect };
}
