import { describe, expect, it } from 'vitest';
import { isDomainGone, mapDomstate } from './libvirt-domains.ts';
import { VirshError } from './virsh-session.ts';

/** A failure as the long-lived virsh reports it: its `error:` lines, without their prefix. */
const virshError = (...lines: string[]) => new VirshError(lines.join('; '), lines);

describe('what virsh says of a domain', () => {
  it('is gone when libvirt says the domain is not found or does not run', () => {
    expect(
      isDomainGone(
        virshError(
          "failed to get domain 'vdi-a'",
          "Domain not found: no domain with matching name 'vdi-a'",
        ),
      ),
    ).toBe(true);
    expect(
      isDomainGone(virshError('Requested operation is not valid: domain is not running')),
    ).toBe(true);
    // virsh's own line for a lookup of a missing domain, alone
    expect(isDomainGone(virshError("failed to get domain 'vdi-a'"))).toBe(true);
  });

  it('is not gone when the lookup failed because the connection to the host broke', () => {
    for (const cause of [
      'Cannot recv data: Connection reset by peer',
      'internal error: client socket is closed',
      'End of file while reading data: Ncat: Broken pipe.: Input/output error',
    ])
      expect(isDomainGone(virshError("failed to get domain 'vdi-a'", cause))).toBe(false);
    // The first lookup after the host's sshd and its connections ended, as virsh answered it.
    expect(
      isDomainGone(
        virshError(
          'Disconnected from qemu+ssh://vdi-hv-a@127.0.0.1:40553/session?no_verify=1 due to end of file',
          "failed to get domain 'vdi-a'",
        ),
      ),
    ).toBe(false);
    // The lookups after it, while the host stays silent.
    expect(
      isDomainGone(
        virshError('Failed to reconnect to the hypervisor', "failed to get domain 'vdi-a'"),
      ),
    ).toBe(false);
    expect(isDomainGone(new Error('Domain not found'))).toBe(false);
  });

  it('maps the states that run and nothing else', () => {
    expect(mapDomstate('running\n')).toBe('running');
    expect(mapDomstate('in shutdown')).toBe('running');
    expect(mapDomstate('paused')).toBe('paused');
    expect(mapDomstate('shut off')).toBeUndefined();
  });
});
