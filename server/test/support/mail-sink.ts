/**
 * A loopback SMTP server for tests: it accepts every message (any AUTH, or none; no TLS) on
 * 127.0.0.1, parses it and keeps it. Point SMTP_URL (config.smtpUrl) at `url` and wait for a mail
 * with `waitFor`. Depends on smtp-server and mailparser only, so the end-to-end tests can use it.
 *
 *   const sink = await start();
 *   ... config.smtpUrl = sink.url ...
 *   const mail = await sink.waitFor((m) => m.to.includes('user@example.org'));
 *   mail.links[0] // the first http(s) link of the text
 *   await sink.stop();
 */
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { simpleParser } from 'mailparser';

export interface SinkMessage {
  /** the envelope's sender and recipients */
  from: string;
  to: string[];
  subject: string;
  text: string;
  html: string;
  /** http(s) links of the text part, in order */
  links: string[];
  /** when it arrived (epoch ms) */
  receivedAt: number;
}

export interface MailSink {
  port: number;
  /** `smtp://127.0.0.1:<port>` */
  url: string;
  /** every message received so far, in arrival order */
  messages: SinkMessage[];
  /**
   * The first message (in arrival order, already received or still to come) matching
   * `predicate`; rejects after `timeoutMs` (default 5000).
   */
  waitFor(predicate: (message: SinkMessage) => boolean, timeoutMs?: number): Promise<SinkMessage>;
  stop(): Promise<void>;
}

const LINK = /https?:\/\/[^\s<>"']+/g;

const addressList = (value: unknown): string[] =>
  Array.isArray(value)
    ? value.flatMap((a: unknown) => {
        const address: unknown = a && typeof a === 'object' ? Reflect.get(a, 'address') : a;
        return typeof address === 'string' ? [address] : [];
      })
    : [];

/** Starts the sink on `port` (default: a free port the system picks). */
export async function start(options: { port?: number } = {}): Promise<MailSink> {
  const messages: SinkMessage[] = [];
  const waiters = new Set<{
    test: (m: SinkMessage) => boolean;
    resolve: (m: SinkMessage) => void;
  }>();

  const server = new SMTPServer({
    authOptional: true,
    allowInsecureAuth: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onAuth(auth, _session, callback) {
      callback(null, { user: auth.username ?? 'anyone' });
    },
    onData(stream, session, callback) {
      simpleParser(stream)
        .then((parsed) => {
          const text = parsed.text ?? '';
          const message: SinkMessage = {
            from:
              session.envelope.mailFrom && typeof session.envelope.mailFrom === 'object'
                ? session.envelope.mailFrom.address
                : '',
            to: addressList(session.envelope.rcptTo),
            subject: parsed.subject ?? '',
            text,
            html: typeof parsed.html === 'string' ? parsed.html : '',
            links: [...text.matchAll(LINK)].map((m) => m[0]),
            receivedAt: Date.now(),
          };
          messages.push(message);
          for (const waiter of waiters)
            if (waiter.test(message)) {
              waiters.delete(waiter);
              waiter.resolve(message);
            }
          callback();
        })
        .catch((err: unknown) => callback(err instanceof Error ? err : new Error(String(err))));
    },
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.server.address() as AddressInfo).port;

  return {
    port,
    url: `smtp://127.0.0.1:${port}`,
    messages,
    waitFor(predicate, timeoutMs = 5000) {
      const found = messages.find(predicate);
      if (found) return Promise.resolve(found);
      return new Promise<SinkMessage>((resolve, reject) => {
        const waiter = {
          test: predicate,
          resolve: (m: SinkMessage) => {
            clearTimeout(timer);
            resolve(m);
          },
        };
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(new Error(`no mail matched within ${timeoutMs} ms (${messages.length} received)`));
        }, timeoutMs);
        waiters.add(waiter);
      });
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
