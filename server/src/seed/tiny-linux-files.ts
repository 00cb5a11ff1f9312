/**
 * The files of the Tiny Linux guest's initramfs that are text: the init script, inittab, the DHCP
 * hook, the accounts. Pure (no I/O); `tiny-linux.ts` writes them into the image.
 *
 * What the guest does at boot (`/etc/rc`): mounts the kernel file systems, loads the virtio network,
 * virtio random number generator and ACPI button modules, names itself `tiny-<last three bytes of its MAC>`, writes the SSH keys
 * given on the kernel command line (`tiny.keys=<base64 of an authorized_keys file>`) for root and
 * the console account, starts `httpd` on port 80 (a page that names the guest and its first card's
 * address, and `/cgi-bin/reach?<IPv4 address>`, which answers whether the guest gets a ping answer
 * from that address: what its network lets it reach), `dropbear` on port 22 (keys only), `acpid`
 * (the ACPI power button powers it off) and, in the background, HTTPS on port 443 (`openssl
 * s_server -WWW` serving the same files by name, e.g. `/index.html`, with a self-signed
 * certificate made at boot whose common name is the guest's host name), then takes an address by
 * DHCP on every card (`udhcpc`, in the background: the first card's router is the default route;
 * another card answers through its own router, by a rule on its address), so the services answer
 * as soon as an address is there. A login prompt runs on the VGA console (tty1).
 */

/** The first line of the guest's web page and of its console banner. */
export const TINY_LINUX_BANNER = 'Tiny Linux';

/** Kernel modules the guest loads, in load order (dependencies first). */
export const TINY_LINUX_MODULES = [
  'virtio_ring',
  'virtio',
  'virtio_pci_legacy_dev',
  'virtio_pci_modern_dev',
  'virtio_pci',
  // The portal's desktops have a virtio random number generator: with it the kernel's random pool
  // is ready at once, and the TLS key made at boot costs no wait for entropy.
  'virtio-rng',
  'failover',
  'net_failover',
  'virtio_net',
  'button',
  'evdev',
] as const;

/** The init script; `user` is the console account, which trusts the same SSH keys as root. */
const rc = (user: string) => `#!/bin/sh
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /run /tmp /var/run /var/log
mount -t devpts devpts /dev/pts
for m in ${TINY_LINUX_MODULES.join(' ')}; do insmod /lib/modules/$m.ko 2>/dev/null; done
ip link set lo up
mac=$(cat /sys/class/net/eth0/address 2>/dev/null)
name=tiny-$(echo "$mac" | cut -d: -f4-6 | tr -d :)
[ -n "$mac" ] || name=tiny-linux
hostname "$name"
echo "$name" > /etc/hostname
keys=$(sed -n 's/.*tiny\\.keys=\\([^ ]*\\).*/\\1/p' /proc/cmdline)
for home in /root /home/${user}; do
  mkdir -p $home/.ssh
  [ -n "$keys" ] && echo "$keys" | base64 -d > $home/.ssh/authorized_keys
  chmod 700 $home/.ssh
  chmod 600 $home/.ssh/authorized_keys 2>/dev/null
done
chown -R ${user}:${user} /home/${user}
interface=eth0 /etc/udhcpc.script deconfig
httpd -h /www -p 80
mkdir -p /etc/dropbear
dropbear -R -s -p 22
acpid
(cd /www && openssl req -config /etc/tls.cnf -x509 -nodes \\
  -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -keyout /etc/tls-key.pem \\
  -out /etc/tls-cert.pem -subj "/CN=$name" -days 3650 2>/dev/null &&
  exec openssl s_server -quiet -accept 443 -cert /etc/tls-cert.pem -key /etc/tls-key.pem -WWW \\
  </dev/null >/dev/null 2>&1) &
for card in /sys/class/net/eth*; do
  [ -e "$card" ] || continue
  ip link set "\${card##*/}" up
  udhcpc -b -S -i "\${card##*/}" -x hostname:"$name" -s /etc/udhcpc.script
done
`;

const udhcpcScript = `#!/bin/sh
page() {
  cat > /www/index.html <<EOF
<!doctype html>
<html><head><title>${TINY_LINUX_BANNER} $(hostname)</title></head>
<body><h1>${TINY_LINUX_BANNER}</h1><p>host: $(hostname)</p><p>address: $1</p></body></html>
EOF
}
case "$1" in
  deconfig)
    ip addr flush dev "$interface" 2>/dev/null
    [ "$interface" = eth0 ] && page none
    ;;
  bound|renew)
    ip addr flush dev "$interface"
    ip addr add "$ip/\${mask:-24}" dev "$interface"
    if [ "$interface" != eth0 ]; then
      # Another card answers through its own router: what reaches its address leaves by it.
      table=$((100 + \${interface#eth}))
      while ip rule del table "$table" 2>/dev/null; do :; done
      ip rule add from "$ip" table "$table"
      [ -n "$router" ] && ip route replace default via "\${router%% *}" dev "$interface" table "$table"
      exit 0
    fi
    [ -n "$router" ] && ip route replace default via "\${router%% *}" dev "$interface"
    : > /etc/resolv.conf
    for d in $dns; do echo "nameserver $d" >> /etc/resolv.conf; done
    page "$ip"
    ;;
esac
exit 0
`;

/**
 * A network diagnostic: one ping to the IPv4 address of the query, answered as plain text (the
 * header lines end in CRLF: strict HTTP clients refuse bare LF).
 */
const reachCgi = `#!/bin/sh
printf 'Content-Type: text/plain\\r\\n\\r\\n'
case "$QUERY_STRING" in
  *[!0-9.]*|"") echo "not an IPv4 address"; exit 0 ;;
esac
if ping -c 1 -W 2 "$QUERY_STRING" >/dev/null 2>&1; then echo reachable; else echo unreachable; fi
`;

const inittab = `::sysinit:/etc/rc
tty1::respawn:/sbin/getty 38400 tty1
::ctrlaltdel:/sbin/reboot
::shutdown:/bin/umount -a -r
`;

const issue = `
  ${TINY_LINUX_BANNER} (\\n) - busybox, dropbear, the Debian cloud kernel
  Log in with the desktop's guest credentials.

`;

/** The text files of the initramfs, by path (relative to its root), with their modes. */
export function tinyLinuxTextFiles(options: {
  /** Login name and crypt(3) hash of the console account (uid 1000). */
  user: string;
  passwordHash: string;
}): { path: string; mode: number; text: string }[] {
  const { user, passwordHash } = options;
  return [
    { path: 'etc/rc', mode: 0o755, text: rc(user) },
    { path: 'etc/udhcpc.script', mode: 0o755, text: udhcpcScript },
    { path: 'etc/inittab', mode: 0o644, text: inittab },
    { path: 'etc/issue', mode: 0o644, text: issue },
    { path: 'etc/acpid.conf', mode: 0o644, text: 'PWRF poweroff\n' },
    // What `openssl req` needs to make the certificate from its -subj alone.
    { path: 'etc/tls.cnf', mode: 0o644, text: '[req]\ndistinguished_name = dn\n[dn]\n' },
    {
      path: 'etc/passwd',
      mode: 0o644,
      text: `root:${passwordHash}:0:0:root:/root:/bin/sh\n${user}:${passwordHash}:1000:1000:${user}:/home/${user}:/bin/sh\n`,
    },
    { path: 'etc/group', mode: 0o644, text: `root:x:0:\n${user}:x:1000:\n` },
    { path: 'etc/shells', mode: 0o644, text: '/bin/sh\n' },
    { path: 'etc/hostname', mode: 0o644, text: 'tiny-linux\n' },
    { path: 'www/index.html', mode: 0o644, text: `<h1>${TINY_LINUX_BANNER}</h1>\n` },
    { path: 'www/cgi-bin/reach', mode: 0o755, text: reachCgi },
  ];
}

/**
 * The syslinux configuration: boots the kernel with the initramfs, the keys on the command line.
 * `cryptomgr.notests` skips the kernel's self-tests of its crypto algorithms, a third of a second
 * of boot under TCG for checks a demo guest does not need.
 */
export function syslinuxConfig(authorizedKeys: string): string {
  const keys = authorizedKeys.trim()
    ? ` tiny.keys=${Buffer.from(`${authorizedKeys.trim()}\n`).toString('base64')}`
    : '';
  return `DEFAULT linux
PROMPT 0
TIMEOUT 0
LABEL linux
  KERNEL vmlinuz
  INITRD initrd.gz
  APPEND rdinit=/sbin/init quiet console=tty0 panic=10 cryptomgr.notests${keys}
`;
}
