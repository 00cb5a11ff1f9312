import { describe, expect, it } from 'vitest';
import { redactSecrets } from './log-redact.ts';

const JWT = 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzZXNzaW9uX2lkIjoiYWJjIn0.c2lnbmF0dXJlLWJ5dGVz';

describe('redactSecrets', () => {
  it('removes a JWT wherever it stands: path segment, query value, message text', () => {
    for (const line of [
      `{"req":{"url":"/api/v3/domain/info/${JWT}"}}`,
      `{"req":{"url":"/api/v3/user?x=${JWT}&y=1"}}`,
      `{"msg":"token was ${JWT}, rejected"}`,
    ]) {
      const out = redactSecrets(line);
      expect(out).not.toContain('eyJ');
      expect(out).toContain('[redacted]');
    }
  });

  it('removes values of secret-named JSON keys, including escaped quotes', () => {
    const out = redactSecrets(
      '{"password":"p\\"w","spice_password":"abc","ticket":"t1","api_key":"k","name":"kept"}',
    );
    expect(out).toBe(
      '{"password":"[redacted]","spice_password":"[redacted]","ticket":"[redacted]","api_key":"[redacted]","name":"kept"}',
    );
  });

  it("removes an LDAP directory's service account password from a logged body", () => {
    expect(redactSecrets('{"bind_dn":"cn=portal","bind_password":"S3cret)(x"}')).toBe(
      '{"bind_dn":"cn=portal","bind_password":"[redacted]"}',
    );
  });

  it("removes an OpenID Connect provider's client secret from a logged body", () => {
    expect(redactSecrets('{"client_id":"portal","client_secret":"s3cr3t-value"}')).toBe(
      '{"client_id":"portal","client_secret":"[redacted]"}',
    );
  });

  it('removes secret query and key=value pairs, HTTP credentials and URL user info', () => {
    const out = redactSecrets(
      'GET /api/v3/viewer/vnc?ticket=abc123&desktop=d1 password=hunter2 Bearer xyz.abc Basic dXNlcjpwdw== proxy=http://u1:s3cret@portal:8080',
    );
    expect(out).not.toMatch(/abc123|hunter2|xyz\.abc|dXNlcjpwdw|s3cret/);
    expect(out).toContain('desktop=d1');
    expect(out).toContain('http://[redacted]@portal:8080');
  });

  it('removes API keys wherever they stand', () => {
    const key = 'vdik_Q2hhbmdlLW1lLXRoaXMtaXMtYS10ZXN0LWtleS0xMjM0';
    const out = redactSecrets(`{"msg":"key ${key} refused","req":{"url":"/x?k=${key}"}}`);
    expect(out).not.toContain('Q2hhbmdl');
    expect(out).toContain('[redacted]');
  });

  it('leaves lines without secrets as they are', () => {
    const line =
      '{"level":30,"msg":"request completed","req":{"url":"/api/v3/user/desktops"},"res":{"statusCode":200}}';
    expect(redactSecrets(line)).toBe(line);
  });
});
