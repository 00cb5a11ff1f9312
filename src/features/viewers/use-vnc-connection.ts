/**
 * The browser VNC connection of one desktop (style 7.3 item 11: the viewer owns its lifecycle).
 * Each connection fetches a NEW single-use ticket (from `desktops.viewer`, or from the ticket
 * fetcher it is given: the direct viewer's), opens noVNC on the same-origin websocket and reports
 * its status. An unexpected close re-asks the server: a 409
 * (`viewer_not_started`) means the desktop stopped; otherwise it reconnects (a few attempts).
 * Only loaded in the viewer page's lazy chunk (noVNC uses top-level await).
 */
import { useCallback, useEffect, useRef, useState, type RefObject } from 'react';
import RFB from '@novnc/novnc';
import { followsStart } from '@/lib/viewer-start';
import { isApiError } from '@/providers/http-client';
import { takeConsoleChannel } from './console-channel';
import { fetchViewer, isBrowserViewer, websocketUrl, type ViewerAnswer } from './viewer-api';

export type VncStatus =
  'connecting' | 'connected' | 'reconnecting' | 'disconnected' | 'stopped' | 'error';

export const MAX_RECONNECTS = 3;
const RECONNECT_DELAY_MS = 1000;
/** Between two asks of a page that follows a start (see viewer-start). */
const START_RETRY_MS = 250;

export interface VncConnection {
  status: VncStatus;
  /** Desktop name from the viewer answer / RFB server. */
  name: string;
  /** Failure shown in status `error`. */
  error: unknown;
  rfb: RFB | null;
  connect: () => void;
  disconnect: () => void;
}

/** Asks for a new console ticket of a desktop (a browser viewer answer). */
export type VncTicketFetcher = (id: string) => Promise<ViewerAnswer>;

/** The logged-in user's ticket: the `desktops.viewer` call. */
const desktopTicket: VncTicketFetcher = (id) => fetchViewer(id, 'browser-vnc');

/** True when the viewer endpoint says the desktop is not running. */
function isNotStarted(error: unknown): boolean {
  return (
    isApiError(error) &&
    (error.statusCode === 409 || error.description_code === 'viewer_not_started')
  );
}

export function useVncConnection(
  id: string | undefined,
  target: RefObject<HTMLDivElement | null>,
  scale: boolean,
  fetchTicket: VncTicketFetcher = desktopTicket,
): VncConnection {
  const [status, setStatus] = useState<VncStatus>('connecting');
  const [name, setName] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [rfb, setRfb] = useState<RFB | null>(null);
  const rfbRef = useRef<RFB | null>(null);
  const generation = useRef(0);
  const attempts = useRef(0);
  const scaleRef = useRef(scale);
  // Read at connect time: a new fetcher identity does not reconnect.
  const fetchTicketRef = useRef(fetchTicket);
  const reopenRef = useRef<((reconnecting: boolean) => Promise<void>) | null>(null);

  const teardown = useCallback(() => {
    const current = rfbRef.current;
    rfbRef.current = null;
    setRfb(null);
    if (current) {
      try {
        current.disconnect();
      } catch {
        // already closed
      }
    }
  }, []);

  const open = useCallback(
    async (reconnecting: boolean) => {
      if (!id || !target.current) return;
      const run = ++generation.current;
      teardown();
      setStatus(reconnecting ? 'reconnecting' : 'connecting');
      setError(null);
      let answer;
      try {
        answer = await fetchTicketRef.current(id);
      } catch (failure) {
        if (run !== generation.current) return;
        // A page opened with the start request still on its way asks again for a while.
        if (isNotStarted(failure) && !reconnecting && followsStart()) {
          setTimeout(() => {
            if (run === generation.current) void reopenRef.current?.(false);
          }, START_RETRY_MS);
          return;
        }
        if (isNotStarted(failure)) setStatus('stopped');
        else {
          setError(failure);
          setStatus('error');
        }
        return;
      }
      if (run !== generation.current || !target.current) return;
      if (!isBrowserViewer(answer)) {
        setStatus('error');
        return;
      }
      setName(answer.values.vmName ?? '');
      // The socket the page opened as the ticket came (viewer page), else a new one.
      const channel = takeConsoleChannel(answer.url);
      const client = new RFB(target.current, channel ?? websocketUrl(answer.url), {
        credentials: { password: answer.values.password ?? '' },
      });
      client.scaleViewport = scaleRef.current;
      client.clipViewport = !scaleRef.current;
      client.focusOnClick = true;
      client.background = '#111';
      client.addEventListener('connect', () => {
        if (run !== generation.current) return;
        attempts.current = 0;
        setStatus('connected');
        client.focus();
      });
      client.addEventListener('credentialsrequired', () =>
        client.sendCredentials({ password: answer.values.password ?? '' }),
      );
      client.addEventListener('desktopname', (event) => {
        const detail = (event as CustomEvent<{ name?: string }>).detail;
        if (detail?.name && !answer.values.vmName) setName(detail.name);
      });
      client.addEventListener('securityfailure', (event) => {
        if (run !== generation.current) return;
        setError({
          description_code: 'viewer_security_failure',
          params: (event as CustomEvent<{ reason?: string }>).detail ?? null,
        });
      });
      client.addEventListener('disconnect', () => {
        if (run !== generation.current) return; // closed on purpose (teardown / new run)
        rfbRef.current = null;
        setRfb(null);
        // Ask the server why: a stopped desktop answers 409, else reconnect with a new ticket.
        if (attempts.current >= MAX_RECONNECTS) {
          setStatus('disconnected');
          return;
        }
        attempts.current += 1;
        setStatus('reconnecting');
        setTimeout(
          () => {
            if (run === generation.current) void reopenRef.current?.(true);
          },
          attempts.current === 1 ? 0 : RECONNECT_DELAY_MS,
        );
      });
      rfbRef.current = client;
      setRfb(client);
    },
    [id, target, teardown],
  );

  useEffect(() => {
    reopenRef.current = open;
  }, [open]);

  useEffect(() => {
    fetchTicketRef.current = fetchTicket;
  }, [fetchTicket]);

  useEffect(() => {
    scaleRef.current = scale;
    const current = rfbRef.current;
    if (current) {
      current.scaleViewport = scale;
      current.clipViewport = !scale;
    }
  }, [scale]);

  useEffect(() => {
    attempts.current = 0;
    // Connect after the commit; a mount undone at once (StrictMode) never asks for a ticket.
    const mounted = generation.current;
    queueMicrotask(() => {
      if (generation.current === mounted) void open(false);
    });
    return () => {
      generation.current += 1;
      teardown();
    };
  }, [open, teardown]);

  const connect = useCallback(() => {
    attempts.current = 0;
    void open(false);
  }, [open]);

  const disconnect = useCallback(() => {
    generation.current += 1;
    teardown();
    setStatus('disconnected');
  }, [teardown]);

  return { status, name, error, rfb, connect, disconnect };
}
