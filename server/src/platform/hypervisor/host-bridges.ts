/**
 * One network's bridge on the host (root only): the Linux bridge with the address `<subnet>.1/24`,
 * a `dnsmasq` on it for DHCP and DNS (pid and leases in `<state dir>/<bridge>.{pid,leases}`,
 * shared by the portals of the host), and the forwarding rules of its kind in the nftables table
 * `ip <bridge>_net` (iptables when `nft` is missing, or none with a log line when both are):
 *
 * - nat: IPv4 forwarding, the bridge's traffic forwarded out and masqueraded, replies let back in;
 *   DHCP names the host as the router and DNS resolves through the host.
 * - isolated: nothing is forwarded to or from the bridge; DHCP names no router and DNS answers
 *   only from dnsmasq itself, so the desktops reach each other and the host, nothing beyond.
 * - vpn: only the users' WireGuard interface (`<prefix>wg0`) is forwarded to and from the bridge
 *   (which tunnel reaches which desktop is the VPN endpoint's own table); DHCP names the host as
 *   the router so the desktops answer the tunnels.
 *
 * Also what reads a bridge's lease file and deletes the TAP devices plugged into it.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, promises as fsp, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type { NetworkDef } from './network-defs.ts';

const execFileAsync = promisify(execFile);

export const run = (cmd: string, args: string[]) => execFileAsync(cmd, args, { timeout: 10_000 });
export const quiet = (p: Promise<unknown>) =>
  p.then(
    () => true,
    () => false,
  );
/**
 * Runs `ip` commands (one per line, without the leading `ip`) in one process: `ip -batch -` stops
 * at the first that fails and answers non-zero. A desktop's cards plug in one run instead of one
 * process per step (an `ip` process costs tens of milliseconds of a start on a loaded host).
 */
export function ipBatch(lines: readonly string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('ip', ['-batch', '-'], { stdio: ['pipe', 'ignore', 'pipe'] });
    let errors = '';
    child.stderr.setEncoding('utf8').on('data', (text: string) => (errors += text));
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new Error(`ip -batch: ${errors.trim() || (signal ?? `exit ${String(code)}`)}`));
    });
    child.stdin.on('error', () => undefined); // an early exit is reported by 'close'
    child.stdin.end(`${lines.join('\n')}\n`);
  });
}

export const onPath = (name: string) =>
  ['/usr/sbin', '/usr/bin', '/sbin', '/bin'].some((dir) => existsSync(path.join(dir, name)));

/** Where a bridge's dnsmasq keeps its leases and its pid. */
export function bridgeFiles(dir: string, bridge: string) {
  return {
    leases: path.join(dir, `${bridge}.leases`),
    pid: path.join(dir, `${bridge}.pid`),
  };
}

/** The nftables table of a bridge's rules. */
export const tableOf = (bridge: string) => `${bridge}_net`;

/** The nft commands of a network's rules (its table made anew). */
export function nftRules(def: NetworkDef, tunnel: string): string[] {
  const table = tableOf(def.bridge);
  const net = `${def.subnet}.0/24`;
  const br = def.bridge;
  const rules = [
    `add table ip ${table}`,
    `add chain ip ${table} forward { type filter hook forward priority 0 ; }`,
  ];
  if (def.kind === 'nat')
    rules.push(
      `add chain ip ${table} postrouting { type nat hook postrouting priority 100 ; }`,
      `add rule ip ${table} postrouting ip saddr ${net} ip daddr != ${net} masquerade`,
      `add rule ip ${table} forward iifname ${br} accept`,
      `add rule ip ${table} forward oifname ${br} ct state established,related accept`,
    );
  else if (def.kind === 'vpn')
    rules.push(
      `add rule ip ${table} forward iifname ${br} oifname != ${tunnel} drop`,
      `add rule ip ${table} forward oifname ${br} iifname != ${tunnel} drop`,
    );
  else
    rules.push(
      `add rule ip ${table} forward iifname ${br} drop`,
      `add rule ip ${table} forward oifname ${br} drop`,
    );
  return rules;
}

/** The iptables rules of a network when nft is missing (table, chain and rule arguments). */
function iptablesRules(def: NetworkDef): string[][] {
  const net = `${def.subnet}.0/24`;
  if (def.kind === 'nat')
    return [['-t', 'nat', 'POSTROUTING', '-s', net, '!', '-d', net, '-j', 'MASQUERADE']];
  return [
    ['-t', 'filter', 'FORWARD', '-i', def.bridge, '-j', 'DROP'],
    ['-t', 'filter', 'FORWARD', '-o', def.bridge, '-j', 'DROP'],
  ];
}

/** Puts a network's forwarding rules in place (`on`) or removes them. */
export async function forwarding(
  def: NetworkDef,
  on: boolean,
  tunnel: string,
  log: (line: string) => void,
): Promise<void> {
  if (onPath('nft')) {
    await quiet(run('nft', ['delete', 'table', 'ip', tableOf(def.bridge)]));
    if (on) await run('nft', [nftRules(def, tunnel).join(' ; ')]);
  } else if (onPath('iptables')) {
    for (const [, table = '', chain = '', ...rule] of iptablesRules(def)) {
      while (await quiet(run('iptables', ['-t', table, '-D', chain, ...rule])));
      if (on) await run('iptables', ['-t', table, '-A', chain, ...rule]);
    }
  } else if (on) {
    log(
      `desktop networks: neither nft nor iptables: the network ${def.id} forwards as the host does`,
    );
  }
}

/** The pid of the bridge's dnsmasq when it runs. */
export function dnsmasqPid(dir: string, bridge: string): number | undefined {
  try {
    const pid = Number(readFileSync(bridgeFiles(dir, bridge).pid, 'utf8').trim());
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    return cmdline.includes('dnsmasq') && cmdline.includes(`--interface=${bridge}\0`)
      ? pid
      : undefined;
  } catch {
    return undefined;
  }
}

async function startDnsmasq(dir: string, def: NetworkDef): Promise<void> {
  const s = def.subnet;
  const files = bridgeFiles(dir, def.bridge);
  // An isolated network names no router and resolves nothing beyond its own hosts.
  const closed = def.kind === 'isolated' ? ['--dhcp-option=option:router', '--no-resolv'] : [];
  // Detached: like the QEMU processes, it outlives a restart of the server.
  const child = spawn(
    'dnsmasq',
    [
      '--keep-in-foreground',
      '--conf-file=/dev/null',
      `--interface=${def.bridge}`,
      '--bind-interfaces',
      '--except-interface=lo',
      `--dhcp-range=${s}.10,${s}.250,255.255.255.0,1h`,
      `--dhcp-leasefile=${files.leases}`,
      '--dhcp-authoritative',
      `--pid-file=${files.pid}`,
      '--log-facility=-',
      ...closed,
    ],
    { detached: true, stdio: 'ignore' },
  );
  child.unref();
  if (!child.pid) throw new Error('dnsmasq did not start');
  for (let i = 0; i < 50 && !dnsmasqPid(dir, def.bridge); i++) {
    if (child.exitCode !== null) throw new Error(`dnsmasq exited with ${child.exitCode}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  if (!dnsmasqPid(dir, def.bridge)) throw new Error('dnsmasq wrote no pid file');
}

/** Makes the network's bridge, its address, its rules and its dnsmasq (what exists is kept). */
export async function setUpBridge(
  dir: string,
  def: NetworkDef,
  tunnel: string,
  log: (line: string) => void,
): Promise<void> {
  const br = def.bridge;
  await fsp.mkdir(dir, { recursive: true });
  // Another portal on this host may be making the same bridge: "exists" is no failure.
  await quiet(run('ip', ['link', 'add', br, 'type', 'bridge']));
  if (!existsSync(`/sys/class/net/${br}`)) await run('ip', ['link', 'add', br, 'type', 'bridge']);
  await quiet(run('ip', ['addr', 'add', `${def.subnet}.1/24`, 'dev', br]));
  await run('ip', ['link', 'set', br, 'up']);
  if (def.kind !== 'isolated') await fsp.writeFile('/proc/sys/net/ipv4/ip_forward', '1\n');
  await forwarding(def, true, tunnel, log);
  if (!dnsmasqPid(dir, br)) await startDnsmasq(dir, def);
}

/** Removes the network's dnsmasq, rules and bridge (its cards are unplugged with it). */
export async function tearDownBridge(
  dir: string,
  def: NetworkDef,
  tunnel: string,
  log: (line: string) => void,
): Promise<void> {
  const pid = dnsmasqPid(dir, def.bridge);
  if (pid) process.kill(pid, 'SIGTERM');
  await forwarding(def, false, tunnel, log);
  await quiet(run('ip', ['link', 'del', def.bridge]));
  const files = bridgeFiles(dir, def.bridge);
  await fsp.rm(files.leases, { force: true });
  await fsp.rm(files.pid, { force: true });
}

/** Deletes the cards' TAP devices that exist (a missing one is no error). */
export async function deleteTaps(cards: readonly { tap: string }[]): Promise<void> {
  for (const card of cards)
    if (existsSync(`/sys/class/net/${card.tap}`)) await quiet(run('ip', ['link', 'del', card.tap]));
}

/** The lease lines of a dnsmasq lease file, by MAC (`<expiry> <mac> <ip> <host> <client-id>`). */
export function parseLeases(text: string): Map<string, { ip: string; line: string }> {
  const leases = new Map<string, { ip: string; line: string }>();
  for (const line of text.split('\n')) {
    const [, mac, ip] = line.trim().split(/\s+/);
    if (mac && ip) leases.set(mac.toLowerCase(), { ip, line });
  }
  return leases;
}

export const readLeases = async (file: string) =>
  parseLeases(await fsp.readFile(file, 'utf8').catch(() => ''));
