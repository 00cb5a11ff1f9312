/**
 * The browser console's websocket, opened as soon as its ticket is there: the viewer page opened
 * with a usable session asks for the ticket as its entry evaluates, and the socket (the proxy's
 * connection to the desktop's VNC server, its handshake) then opens while the page still loads
 * and renders the console; the console takes it (`takeConsoleChannel`) instead of opening its own.
 * What the server sends before the console takes the socket waits in the channel and is handed
 * over in order, after noVNC has seen the socket open.
 */

/** Same-origin websocket URL of a viewer path. */
export function websocketUrl(
  path: string,
  location: Pick<Location, 'protocol' | 'host'> = window.location,
): string {
  return `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}${path}`;
}

type Handler<E extends Event> = ((event: E) => void) | null;

/**
 * A WebSocket as noVNC takes one (its "raw channel": send, close, binaryType, readyState,
 * protocol and the four on* handlers) that keeps the messages arriving before anyone listens.
 */
export class ConsoleChannel {
  binaryType: BinaryType = 'arraybuffer';
  readonly url: string;
  readonly #socket: WebSocket;
  readonly #early: MessageEvent[] = [];
  #onmessage: Handler<MessageEvent> = null;
  #onopen: Handler<Event> = null;
  #onclose: Handler<CloseEvent> = null;
  #onerror: Handler<Event> = null;

  constructor(url: string, open: (url: string) => WebSocket = (u) => new WebSocket(u)) {
    this.url = url;
    this.#socket = open(url);
    this.#socket.binaryType = 'arraybuffer';
    this.#socket.onmessage = (event) => {
      if (this.#onmessage && this.#early.length === 0) this.#onmessage(event);
      else this.#early.push(event);
    };
    this.#socket.onopen = (event) => this.#onopen?.(event);
    this.#socket.onclose = (event) => this.#onclose?.(event);
    this.#socket.onerror = (event) => this.#onerror?.(event);
  }

  get readyState(): number {
    return this.#socket.readyState;
  }

  get protocol(): string {
    return this.#socket.protocol;
  }

  send(data: string | ArrayBufferLike | ArrayBufferView | Blob): void {
    this.#socket.send(data as ArrayBuffer);
  }

  close(code?: number, reason?: string): void {
    this.#socket.close(code, reason);
  }

  get onmessage(): Handler<MessageEvent> {
    return this.#onmessage;
  }

  /**
   * The listener gets what came before it, in order, in a task of its own: noVNC attaches its
   * listener and only then handles the socket being open, which must come first.
   */
  set onmessage(handler: Handler<MessageEvent>) {
    this.#onmessage = handler;
    if (!handler || this.#early.length === 0) return;
    setTimeout(() => {
      while (this.#onmessage === handler && this.#early.length > 0) {
        const event = this.#early.shift();
        if (event) handler(event);
      }
    }, 0);
  }

  get onopen(): Handler<Event> {
    return this.#onopen;
  }

  set onopen(handler: Handler<Event>) {
    this.#onopen = handler;
  }

  get onclose(): Handler<CloseEvent> {
    return this.#onclose;
  }

  set onclose(handler: Handler<CloseEvent>) {
    this.#onclose = handler;
  }

  get onerror(): Handler<Event> {
    return this.#onerror;
  }

  set onerror(handler: Handler<Event>) {
    this.#onerror = handler;
  }
}

/** The channel opened ahead, by the websocket path (with its ticket) it was opened for. */
let opened: ConsoleChannel | null = null;
/** The websocket URLs a console already asked for: one opened ahead later would spend its ticket. */
const claimed = new Set<string>();

/** Opens the console's websocket for a browser viewer answer (its `url`) ahead of the console. */
export function preopenConsole(
  answer: unknown,
  open?: (url: string) => WebSocket,
): ConsoleChannel | null {
  const path =
    answer && typeof answer === 'object' && (answer as { kind?: unknown }).kind === 'browser'
      ? (answer as { url?: unknown }).url
      : undefined;
  if (typeof path !== 'string' || claimed.has(websocketUrl(path))) return null;
  opened?.close();
  opened = new ConsoleChannel(websocketUrl(path), open);
  return opened;
}

/**
 * The channel opened ahead for this websocket path (the ticket the console holds), taken once;
 * null when there is none, or it is already closing or closed (the console then opens its own).
 */
export function takeConsoleChannel(path: string): ConsoleChannel | null {
  const url = websocketUrl(path);
  claimed.add(url);
  const channel = opened;
  if (!channel || channel.url !== url) return null;
  opened = null;
  if (channel.readyState === WebSocket.CLOSING || channel.readyState === WebSocket.CLOSED) {
    channel.close();
    return null;
  }
  return channel;
}
