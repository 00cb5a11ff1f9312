/**
 * How a bastion target is reached, as the modal shows it: `ssh -p <port> <target id>@<host>`
 * (no `-p` for 22) and `http://<target id>.<bastion domain>` or the custom domain (the port when
 * it is not 80). The host is the bastion domain, else the portal's own host.
 */
export interface BastionAddressInput {
  targetId: string;
  domain: string | null | undefined;
  bastionDomain: string | null | undefined;
  sshPort: string | null | undefined;
  httpPort: string | null | undefined;
  pageHost: string;
}

export function sshCommand(input: BastionAddressInput): string {
  const host = input.bastionDomain || input.pageHost;
  const port = input.sshPort && input.sshPort !== '22' ? `-p ${input.sshPort} ` : '';
  return `ssh ${port}${input.targetId}@${host}`;
}

export function httpUrl(input: BastionAddressInput): string | null {
  const host =
    input.domain || (input.bastionDomain ? `${input.targetId}.${input.bastionDomain}` : null);
  if (!host) return null;
  const port = input.httpPort && input.httpPort !== '80' ? `:${input.httpPort}` : '';
  return `http://${host}${port}`;
}

/** The textarea's lines as the key list: trimmed, blank lines dropped. */
export function keysOf(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
}
