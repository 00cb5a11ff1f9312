/**
 * What the users' VPN tunnel may reach, in the server's own nftables table `ip <prefix>_vpn`:
 * a packet from the WireGuard interface to the desktops' bridge passes only when its (source,
 * destination) pair is in the set `reach` (a user's tunnel address and the address of a desktop
 * that user may reach); the replies go back; the tunnel answers ping at the server's own address;
 * everything else from or to the tunnel is dropped (no tunnel reaches another, the host's other
 * services or the host's other networks). The set is replaced in one nft transaction, so a sync
 * never opens a gap.
 */
import { execFile } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

export interface ReachPair {
  /** the user's tunnel address */
  user: string;
  /** the desktop's address on the bridge */
  desktop: string;
}

const IPV4 = /^\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}$/;

/** Runs an nft script as one transaction (from a file: `-f -` cannot read Node's socket pipes). */
async function nft(script: string): Promise<void> {
  const dir = await fsp.mkdtemp(path.join(tmpdir(), 'vdi-nft-'));
  try {
    const file = path.join(dir, 'rules.nft');
    await fsp.writeFile(file, script);
    await execFileAsync('nft', ['-f', file], { timeout: 10_000 }).catch((error: unknown) => {
      const stderr = (error as { stderr?: unknown }).stderr;
      throw new Error(`nft: ${typeof stderr === 'string' ? stderr.trim() : String(error)}`);
    });
  } finally {
    await fsp.rm(dir, { recursive: true, force: true });
  }
}

export class VpnFirewall {
  readonly table: string;
  private made = false;

  constructor(
    prefix: string,
    private readonly tunnel: string,
    private bridge: string,
  ) {
    this.table = `${prefix}_vpn`;
  }

  /** The bridge the tunnels reach (the VPN network's): its rules are made anew when it changes. */
  useBridge(bridge: string): void {
    if (bridge === this.bridge) return;
    this.bridge = bridge;
    this.made = false;
  }

  /** The table's rules (made anew the first time), the set emptied and filled with `pairs`. */
  async apply(pairs: readonly ReachPair[]): Promise<void> {
    const t = `ip ${this.table}`;
    const lines: string[] = [];
    if (!this.made) {
      // `add` then `delete` drops a leftover table of a previous run without failing on none.
      lines.push(
        `add table ${t}`,
        `delete table ${t}`,
        `add table ${t}`,
        `add set ${t} reach { type ipv4_addr . ipv4_addr ; }`,
        `add chain ${t} forward { type filter hook forward priority -1 ; policy accept ; }`,
        `add rule ${t} forward iifname "${this.tunnel}" oifname "${this.bridge}" ip saddr . ip daddr @reach accept`,
        `add rule ${t} forward iifname "${this.tunnel}" drop`,
        `add rule ${t} forward oifname "${this.tunnel}" ct state established,related accept`,
        `add rule ${t} forward oifname "${this.tunnel}" drop`,
        `add chain ${t} input { type filter hook input priority -1 ; policy accept ; }`,
        `add rule ${t} input iifname "${this.tunnel}" ct state established,related accept`,
        `add rule ${t} input iifname "${this.tunnel}" icmp type echo-request accept`,
        `add rule ${t} input iifname "${this.tunnel}" drop`,
      );
    }
    lines.push(`flush set ${t} reach`);
    const elements = pairs
      .filter((p) => IPV4.test(p.user) && IPV4.test(p.desktop))
      .map((p) => `${p.user} . ${p.desktop}`);
    if (elements.length > 0) lines.push(`add element ${t} reach { ${elements.join(', ')} }`);
    try {
      await nft(`${lines.join('\n')}\n`);
      this.made = true;
    } catch (error) {
      // The table may be gone or damaged: it is made anew the next time.
      this.made = false;
      throw error;
    }
  }

  /** The pairs in the set now (tests, diagnostics). */
  async pairs(): Promise<ReachPair[]> {
    const { stdout: out } = await execFileAsync('nft', ['list', 'set', 'ip', this.table, 'reach']);
    return [...out.matchAll(/(\d+\.\d+\.\d+\.\d+) \. (\d+\.\d+\.\d+\.\d+)/g)].map((m) => ({
      user: m[1] ?? '',
      desktop: m[2] ?? '',
    }));
  }

  /** Removes the table. */
  async remove(): Promise<void> {
    this.made = false;
    const t = `ip ${this.table}`;
    await nft(`add table ${t}\ndelete table ${t}\n`);
  }
}
