/**
 * The HTTP bastion: a request whose Host is `<target id>.<bastion domain>` (or a target's verified
 * custom domain) is relayed to the guest's HTTP port at the desktop's address, only while the
 * target's HTTP access is enabled and the desktop runs with an address. Otherwise it is refused
 * with a short page and `X-Bastion-Refused: <reason>`: 404 `no_target` (no such target), 403
 * `disabled` (HTTP access off), 503 `not_running` / `no_address` (the desktop is not reachable),
 * 502 `guest_unreachable` (the guest did not answer). Requests for any other host are the
 * portal's. HTTPS goes through the passthrough by SNI on its own port (tls-bastion.ts).
 */
import http from 'node:http';
import { isIP } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Bastion } from '../../../../src/generated/types.ts';
import { reachGuest } from './bastion-reach.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const STATUS: Record<string, number> = {
  no_target: 404,
  disabled: 403,
  not_running: 503,
  no_address: 503,
  guest_unreachable: 502,
};

const TEXT: Record<string, string> = {
  no_target: 'There is no bastion target at this address.',
  disabled: 'HTTP access to this desktop is disabled.',
  not_running: 'The desktop is not running.',
  no_address: 'The desktop has no network address yet.',
  guest_unreachable: 'The desktop did not answer.',
};

const page = (reason: string) =>
  `<!doctype html><html><head><meta charset="utf-8"><title>Bastion</title></head><body><h1>Bastion</h1><p>${TEXT[reason] ?? reason}</p></body></html>\n`;

function refuse(reply: FastifyReply, reason: string) {
  return reply
    .code(STATUS[reason] ?? 404)
    .header('x-bastion-refused', reason)
    .header('cache-control', 'no-store')
    .type('text/html; charset=utf-8')
    .send(page(reason));
}

/** The host name of a Host header, lower case, without its port. */
function hostName(header: string | undefined): string {
  const value = (header ?? '').trim().toLowerCase();
  if (value.startsWith('[')) return value.slice(0, value.indexOf(']') + 1);
  return value.replace(/:\d+$/, '');
}

function proxy(request: FastifyRequest, reply: FastifyReply, ip: string, target: Bastion) {
  reply.hijack();
  const req = request.raw;
  const res = reply.raw;
  const upstream = http.request(
    {
      host: ip,
      port: target.http.http_port,
      method: req.method,
      path: req.url,
      headers: {
        ...req.headers,
        'x-forwarded-for': request.ip,
        'x-forwarded-host': req.headers.host ?? '',
        'x-forwarded-proto': 'http',
      },
      timeout: 30_000,
    },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    },
  );
  upstream.on('timeout', () => upstream.destroy(new Error('guest timeout')));
  upstream.on('error', () => {
    if (res.headersSent) return res.destroy();
    res.writeHead(502, {
      'content-type': 'text/html; charset=utf-8',
      'x-bastion-refused': 'guest_unreachable',
    });
    res.end(page('guest_unreachable'));
  });
  req.pipe(upstream);
}

export function registerHttpBastion(app: FastifyInstance): void {
  const portalHost = app.config.publicUrl ? new URL(app.config.publicUrl).hostname : null;
  app.addHook('onRequest', async (request, reply) => {
    const host = hostName(request.headers.host);
    if (!host || isIP(host.replace(/^\[|\]$/g, '')) || host === portalHost || host === 'localhost')
      return;
    const { bastion } = await app.settings.all();
    const domain = bastion.domain?.toLowerCase();
    if (!bastion.enabled || !domain || host === domain) return;
    let target: Bastion | undefined;
    if (host.endsWith(`.${domain}`)) {
      const label = host.slice(0, -domain.length - 1);
      target = UUID.test(label) ? await app.bastion.byIdOrDomain({ id: label }) : undefined;
    } else if (bastion.individual_domains) {
      target = await app.bastion.byIdOrDomain({ domain: host });
      if (!target) return;
    } else return;
    const reach = await reachGuest(app, target, 'http');
    if (!reach.ok) return refuse(reply, reach.reason);
    proxy(request, reply, reach.ip, reach.target);
    return reply;
  });
}
