/**
 * Opens a media URL without letting it reach the portal's own network (server-side request
 * forgery). A URL is refused before any connection unless:
 *
 * - it parses as a WHATWG URL with the http or https scheme and carries no user name or password
 *   (`media_url_bad_format`);
 * - every address its host stands for is public (address-policy.ts): a literal address after the
 *   URL parser normalised it (2130706433, 0177.0.0.1 and 0x7f.1 are 127.0.0.1), or every answer
 *   DNS gives for a name, IPv4 and IPv6 alike; a name DNS cannot resolve is refused too
 *   (`media_url_not_valid`);
 * - it names no port but its scheme's default (80 for http, 443 for https: `media_url_bad_format`).
 *
 * The connection itself resolves the name once more through a lookup that refuses a non-public
 * answer, and connects to exactly the address that lookup checked: a DNS answer that changes
 * between the check and the connection (rebinding) is refused, not followed. Every redirect is a
 * new URL that goes through all of the above; more than five redirects are refused. HTTP 404 is
 * `media_url_not_found`, any other answer than 2xx `media_url_not_valid`.
 *
 * The hosts an administrator names (MEDIA_ALLOWED_HOSTS: `host` for ports 80 and 443, or
 * `host:port`) are admitted on those ports whatever their addresses; nothing else loosens the
 * check.
 *
 * The connection must be established within the connect timeout and the answer's headers must
 * arrive within the stall timeout.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { isPublicAddress } from './address-policy.ts';

export type UrlRefusalCode = 'media_url_bad_format' | 'media_url_not_valid' | 'media_url_not_found';

/**
 * A media URL that may not be downloaded, with the code the API answers. The message may be
 * shown to the caller; `detail` (what a host resolved to) is for the server's log only, so the
 * answer never tells which inside names exist or where they point.
 */
export class MediaUrlError extends Error {
  readonly code: UrlRefusalCode;
  readonly detail: string | undefined;
  constructor(code: UrlRefusalCode, message: string, detail?: string) {
    super(message);
    this.name = 'MediaUrlError';
    this.code = code;
    this.detail = detail;
  }
}

/** Resolves a host name to all of its addresses (both families). */
export type Resolver = (hostname: string) => Promise<readonly LookupAddress[]>;

export const systemResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true, verbatim: true }, (err, addresses) => {
      if (err) reject(err);
      else resolve(addresses);
    });
  });

export interface FetchPolicy {
  /** `host` or `host:port` entries admitted whatever their addresses (MEDIA_ALLOWED_HOSTS). */
  allowedHosts: readonly string[];
  /** Ports a URL may name besides its scheme's default (none in production). */
  ports?: readonly number[];
  /** DNS resolution. Default: the system resolver. */
  resolve?: Resolver;
  connectTimeoutMs: number;
  /** The longest wait for the answer's headers once connected. */
  stallTimeoutMs: number;
  /** Default 5. */
  maxRedirects?: number;
}

/** The default ports of the two schemes: what a host entry without a port admits. */
export const DEFAULT_PORTS: readonly number[] = [80, 443];
export const MAX_REDIRECTS = 5;

/** A URL that passed the checks: where to connect and whether its host is one the admin named. */
export interface VettedUrl {
  url: URL;
  /** host name or literal address, without IPv6 brackets */
  host: string;
  port: number;
  trusted: boolean;
}

const badFormat = (message: string) => new MediaUrlError('media_url_bad_format', message);
const notValid = (message: string) => new MediaUrlError('media_url_not_valid', message);
/** A host that does not resolve or resolves inside: one answer for both. */
const unreachable = (detail: string) =>
  new MediaUrlError('media_url_not_valid', 'the host can not be reached from the portal', detail);

const effectivePort = (url: URL): number =>
  url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;

const bare = (hostname: string) => hostname.replace(/^\[(.*)\]$/, '$1');

/**
 * One MEDIA_ALLOWED_HOSTS entry as `host:port` keys (lower-case, normalised by the URL parser):
 * `host` admits ports 80 and 443, `host:port` that port only. Throws on anything else.
 */
export function allowedHostKeys(entry: string): string[] {
  let url: URL;
  try {
    url = new URL(`http://${entry.trim()}`);
  } catch {
    throw new Error(`not a host[:port]: ${entry}`);
  }
  if (url.username || url.password || url.pathname !== '/' || url.search || url.hash)
    throw new Error(`not a host[:port]: ${entry}`);
  const ports = /:\d+$/.test(entry.trim()) ? [effectivePort(url)] : [...DEFAULT_PORTS];
  return ports.map((port) => `${url.hostname}:${port}`);
}

function isTrusted(url: URL, policy: FetchPolicy): boolean {
  const key = `${url.hostname}:${effectivePort(url)}`;
  return policy.allowedHosts.some((entry) => allowedHostKeys(entry).includes(key));
}

/** The addresses a name stands for; none, or a resolver error, refuses the URL. */
async function resolveAll(host: string, policy: FetchPolicy): Promise<readonly LookupAddress[]> {
  const resolver = policy.resolve ?? systemResolver;
  const addresses = await resolver(host).catch(() => {
    throw unreachable(`${host} does not resolve`);
  });
  if (addresses.length === 0) throw unreachable(`${host} does not resolve`);
  return addresses;
}

function assertPublic(host: string, addresses: readonly LookupAddress[]): void {
  const refused = addresses.find((a) => !isPublicAddress(a.address));
  if (refused) throw unreachable(`${host} resolves to the non-public address ${refused.address}`);
}

/** Checks a URL in the documented order (scheme, credentials, addresses, port); throws MediaUrlError. */
export async function vetUrl(raw: string, policy: FetchPolicy): Promise<VettedUrl> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw badFormat('not a URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw badFormat(`the ${url.protocol} scheme is not allowed`);
  if (url.username || url.password) throw badFormat('a URL with credentials is not allowed');
  if (!url.hostname) throw badFormat('the URL has no host');
  const host = bare(url.hostname);
  const port = effectivePort(url);
  if (isTrusted(url, policy)) return { url, host, port, trusted: true };
  if (net.isIP(host)) assertPublic(host, [{ address: host, family: net.isIP(host) }]);
  else assertPublic(host, await resolveAll(host, policy));
  if (url.port !== '' && !(policy.ports ?? []).includes(port))
    throw badFormat(`port ${port} is not allowed`);
  return { url, host, port, trusted: false };
}

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/**
 * The lookup the connection uses: resolves the name, refuses it unless every answer is public
 * (or the host is trusted), and hands the connection exactly the answers it checked.
 */
function checkedLookup(policy: FetchPolicy, trusted: boolean) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    resolveAll(hostname, policy)
      .then((all) => {
        if (!trusted) assertPublic(hostname, all);
        const wanted = options.family === 4 || options.family === 6 ? options.family : 0;
        const usable = wanted ? all.filter((a) => a.family === wanted) : [...all];
        const [first] = usable;
        if (!first) throw unreachable(`${hostname} has no IPv${wanted} address`);
        if (options.all) callback(null, usable);
        else callback(null, first.address, first.family);
      })
      .catch((err: unknown) =>
        callback(err instanceof Error ? err : unreachable(`${hostname} does not resolve`), ''),
      );
  };
}

/** An answer being downloaded: the 2xx response after redirects, and where it came from. */
export interface OpenedUrl {
  response: IncomingMessage;
  /** the last URL of the redirect chain */
  url: string;
  /** Content-Length when the server sent a valid one */
  contentLength: number | null;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

function request(target: VettedUrl, policy: FetchPolicy, signal?: AbortSignal) {
  return new Promise<IncomingMessage>((resolve, reject) => {
    const client = target.url.protocol === 'https:' ? https : http;
    const req = client.request({
      hostname: target.host,
      port: target.port,
      path: `${target.url.pathname}${target.url.search}`,
      method: 'GET',
      headers: { 'user-agent': 'vdi-portal-media/1', accept: '*/*' },
      agent: false,
      lookup: checkedLookup(policy, target.trusted),
      ...(signal ? { signal } : {}),
    });
    let timer = setTimeout(
      () => req.destroy(notValid('the connection timed out')),
      policy.connectTimeoutMs,
    );
    req.once('socket', (socket) => {
      const connected = () => {
        clearTimeout(timer);
        timer = setTimeout(
          () => req.destroy(notValid('the server did not answer in time')),
          policy.stallTimeoutMs,
        );
      };
      if (socket.connecting) socket.once('connect', connected);
      else connected();
    });
    req.once('response', (response) => {
      clearTimeout(timer);
      resolve(response);
    });
    req.once('error', (err) => {
      clearTimeout(timer);
      reject(
        err instanceof MediaUrlError || err.name === 'AbortError'
          ? err
          : notValid(`the download failed: ${err.message}`),
      );
    });
    req.end();
  });
}

/**
 * Opens `raw` for download: checks it, follows at most five redirects (each one checked again)
 * and answers the 2xx response, whose body the caller reads or destroys.
 */
export async function openUrl(
  raw: string,
  policy: FetchPolicy,
  signal?: AbortSignal,
): Promise<OpenedUrl> {
  let current = raw;
  const maxRedirects = policy.maxRedirects ?? MAX_REDIRECTS;
  for (let hop = 0; ; hop++) {
    const target = await vetUrl(current, policy);
    const response = await request(target, policy, signal);
    const status = response.statusCode ?? 0;
    if (REDIRECTS.has(status)) {
      response.destroy();
      const location = response.headers.location;
      if (!location) throw notValid(`HTTP ${status} without a Location`);
      if (hop >= maxRedirects) throw notValid(`more than ${maxRedirects} redirects`);
      try {
        current = new URL(location, target.url).toString();
      } catch {
        throw notValid('the redirect Location is not a URL');
      }
      continue;
    }
    if (status < 200 || status > 299) {
      response.destroy();
      if (status === 404) throw new MediaUrlError('media_url_not_found', 'HTTP 404');
      throw notValid(`HTTP ${status}`);
    }
    const header = response.headers['content-length'];
    const length = header !== undefined && /^\d+$/.test(header) ? Number(header) : null;
    return { response, url: current, contentLength: length };
  }
}
