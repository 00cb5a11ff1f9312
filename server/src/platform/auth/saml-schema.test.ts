/**
 * The SAML schema check's long-lived thread: one thread serves message after message, a message
 * that does not follow the schemas is refused, a check past its timeout is refused and its thread
 * replaced, the queue is bounded, and a closed validator leaves no thread running.
 */
import { afterAll, describe, expect, it } from 'vitest';
import {
  SamlSchemaValidator,
  SchemaInvalidError,
  SchemaValidatorUnavailableError,
} from './saml-schema.ts';

const response = (attributes = 'Version="2.0"') =>
  `<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="_r1" ${attributes} IssueInstant="2026-01-01T00:00:00Z"><saml:Issuer>https://idp.test/metadata</saml:Issuer><samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status></samlp:Response>`;

const validator = new SamlSchemaValidator({ maxWaiting: 2 });
afterAll(() => validator.close());

describe('the SAML schema validator', () => {
  it('checks message after message in one thread, refusing what the schemas do not allow', async () => {
    await expect(validator.validate(response())).resolves.toBe(true);
    const missing = validator.validate(response(''));
    await expect(missing).rejects.toBeInstanceOf(SchemaInvalidError);
    await expect(missing).rejects.toThrow(/attribute 'Version' is required/);
    await expect(validator.validate('<samlp:Response')).rejects.toBeInstanceOf(SchemaInvalidError);
    await expect(validator.validate(response())).resolves.toBe(true);
    expect(validator.threadsStarted).toBe(1);
  });

  it('refuses at once what does not fit in its queue', async () => {
    const all = await Promise.allSettled([1, 2, 3, 4].map(() => validator.validate(response())));
    expect(all.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'rejected']);
    expect((all[3] as PromiseRejectedResult).reason).toBeInstanceOf(
      SchemaValidatorUnavailableError,
    );
  });

  it('refuses a check past its timeout and replaces the thread, then closes it', async () => {
    const started = validator.threadsStarted;
    validator.timeoutMs = 0;
    await expect(validator.validate(response())).rejects.toBeInstanceOf(
      SchemaValidatorUnavailableError,
    );
    validator.timeoutMs = 10_000;
    await expect(validator.validate(response())).resolves.toBe(true);
    expect(validator.threadsStarted).toBe(started + 1);
    await validator.close();
    expect(validator.running).toBe(false);
  });
});
