/**
 * Account mail (app.mailer). With SMTP_URL the mails go through nodemailer to that server; without
 * it (`delivery: 'log'`) each mail is written to the server log at info level: recipient, subject,
 * then its links on their own lines, so someone running the portal without a mail server can
 * still open them. Those lines bypass the log's secret redaction on purpose: the links are the
 * mail, and the log is where this delivery mode puts it.
 *
 * Work that ends in a mail can run in the background (`later`): the request answers without
 * waiting, failures are logged, and closing the app waits for what is still running.
 */
import type { FastifyPluginAsync } from 'fastify';
import { globalPlugin } from '../../platform/lib/plugin.ts';
import { formatLogLine, type LineSink } from '../../platform/lib/log-format.ts';

export interface Mail {
  to: string;
  subject: string;
  text: string;
  html: string;
  /** the links the mail carries (printed on their own lines in log delivery) */
  links: string[];
}

export type MailDelivery = 'smtp' | 'log';

export interface Mailer {
  readonly delivery: MailDelivery;
  send(mail: Mail): Promise<void>;
  /** Runs `work` without the caller waiting; a failure is logged. */
  later(work: () => Promise<void>): void;
  /** Resolves when no background work is running. */
  idle(): Promise<void>;
}

declare module 'fastify' {
  interface FastifyInstance {
    mailer: Mailer;
  }
}

const INFO_LEVELS: readonly string[] = ['trace', 'debug', 'info'];

export interface MailerOptions {
  /** where log delivery writes (tests); stdout otherwise */
  logSink?: LineSink | undefined;
}

const plugin: FastifyPluginAsync<MailerOptions> = async (app, options) => {
  const { smtpUrl, mailFrom, logLevel, logFormat } = app.config;
  // nodemailer is loaded only by a portal that sends mail (some 12 MB the others need not hold).
  const transport = smtpUrl
    ? (await import('nodemailer')).default.createTransport(smtpUrl)
    : undefined;
  const out: LineSink = options.logSink ?? process.stdout;
  const running = new Set<Promise<void>>();

  const writeToLog = (mail: Mail) => {
    if (!INFO_LEVELS.includes(logLevel)) return;
    const entry = {
      level: 30,
      time: Date.now(),
      msg: `mail to ${mail.to}: "${mail.subject}" (no SMTP_URL: not sent, its links follow)`,
      mail: { to: mail.to, subject: mail.subject, links: mail.links },
    };
    if (logFormat === 'json') {
      out.write(`${JSON.stringify(entry)}\n`);
      return;
    }
    const { mail: _fields, ...head } = entry;
    const lines = [formatLogLine(JSON.stringify(head)), ...mail.links.map((l) => `    ${l}`)];
    out.write(`${lines.join('\n')}\n`);
  };

  const mailer: Mailer = {
    delivery: transport ? 'smtp' : 'log',
    async send(mail) {
      if (!transport) {
        writeToLog(mail);
        return;
      }
      await transport.sendMail({
        from: mailFrom,
        to: mail.to,
        subject: mail.subject,
        text: mail.text,
        html: mail.html,
      });
    },
    later(work) {
      const task = work()
        .catch((err: unknown) => {
          app.log.warn({ err }, 'account mail not sent');
        })
        .finally(() => running.delete(task));
      running.add(task);
    },
    async idle() {
      while (running.size > 0) await Promise.all([...running]);
    },
  };
  app.decorate('mailer', mailer);
  app.addHook('onClose', async () => {
    await mailer.idle();
    transport?.close();
  });
};

export default globalPlugin(plugin, 'mailer');
