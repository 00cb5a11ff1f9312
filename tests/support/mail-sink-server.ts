/**
 * The end-to-end tests' mail server, run by Playwright as a web server beside the portal: a
 * loopback SMTP sink (the portal's SMTP_URL) and a small HTTP endpoint the tests read the mail
 * from, `GET /messages` answering every message received so far as JSON.
 * Usage: npx tsx tests/support/mail-sink-server.ts <smtp port> <http port>
 */
import { createServer } from 'node:http';
import { start } from '../../server/test/mail-sink.ts';

const [smtpPort, httpPort] = process.argv.slice(2).map(Number);
if (!smtpPort || !httpPort) throw new Error('usage: mail-sink-server <smtp port> <http port>');

const sink = await start({ port: smtpPort });
createServer((request, response) => {
  if (request.url === '/messages') {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify(sink.messages));
    return;
  }
  response.writeHead(request.url === '/' ? 200 : 404, { 'content-type': 'text/plain' });
  response.end('mail sink');
}).listen(httpPort, '127.0.0.1');
