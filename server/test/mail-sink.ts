/**
 * The loopback SMTP sink at its former path, for tests/e2e/fixtures.ts: the shared test support
 * lives in server/test/support/.
 */
export * from './support/mail-sink.ts';
