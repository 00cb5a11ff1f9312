/**
 * The SSH bastion: one port for every target. `ssh -p <port> <target id>@<host>` signs in with a
 * key of the target's authorized keys (the signature checked here); then the bastion signs in to
 * the guest (its SSH port at the desktop's address) as the desktop's guest user (its guest
 * credentials' username; `root` when it has none) with the portal's own key, which the guest
 * trusts, else with the guest credentials' password, and relays the session's shell, command, subsystem (sftp), terminal, window
 * size, environment and signals, and the exit status. Refused (no more auth methods) while the
 * target's SSH is disabled or its desktop is not running with an address. Guests' host keys are
 * not checked: they are reached on the desktops' own network.
 */
import { createServer, type Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type {
  Client as SshClient,
  ClientChannel,
  Connection,
  PasswordAuthMethod,
  PseudoTtyInfo,
  PublicKeyAuthMethod,
  ServerChannel,
} from 'ssh2';
import type { SshKeyPair } from './bastion-keys.ts';
import { reachGuest, type Reach } from './bastion-reach.ts';
import { ssh2Library } from './ssh2-library.ts';

/** The account of the guest the bastion signs in to when the desktop names no guest user. */
export const DEFAULT_GUEST_SSH_USER = 'root';

type Ssh2 = Awaited<ReturnType<typeof ssh2Library>>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether one of the authorized_keys lines is this public key (its wire blob). */
function keyListed({ utils }: Ssh2, lines: readonly string[], blob: Buffer) {
  for (const line of lines) {
    const parsed = utils.parseKey(line);
    const key = Array.isArray(parsed) ? parsed[0] : parsed;
    if (key && !(key instanceof Error) && key.getPublicSSH().equals(blob)) return key;
  }
  return undefined;
}

/** Pipes a client's channel and the guest's both ways, exit status included. */
function relay(down: ServerChannel, up: ClientChannel) {
  down.pipe(up).pipe(down);
  up.stderr.pipe(down.stderr);
  up.on('exit', (code: number | null, signal?: string) => {
    if (signal) down.exit(signal.replace(/^SIG/, ''));
    else down.exit(code ?? 0);
  });
  up.on('close', () => down.close());
  down.on('close', () => up.close());
}

function relaySession(client: Connection, guest: Promise<SshClient>) {
  client.on('session', (acceptSession) => {
    const session = acceptSession();
    let pty: PseudoTtyInfo | undefined;
    const env: Record<string, string> = {};
    let upstream: ClientChannel | undefined;
    const ptyOptions = () =>
      pty && {
        term: pty.term,
        rows: pty.rows,
        cols: pty.cols,
        width: pty.width,
        height: pty.height,
      };
    const open = (
      accept: () => ServerChannel,
      reject: () => void,
      start: (
        guestClient: SshClient,
        done: (err: Error | undefined, ch: ClientChannel) => void,
      ) => void,
    ) => {
      guest.then(
        (guestClient) =>
          start(guestClient, (err, channel) => {
            if (err) return reject();
            upstream = channel;
            relay(accept(), channel);
          }),
        () => reject(),
      );
    };
    session.on('pty', (accept, _reject, info) => {
      pty = info;
      accept?.();
    });
    session.on('env', (accept, _reject, info) => {
      env[info.key] = info.val;
      accept?.();
    });
    session.on('window-change', (accept, _reject, info) => {
      upstream?.setWindow(info.rows, info.cols, info.height, info.width);
      accept?.();
    });
    session.on('signal', (accept, _reject, info) => {
      upstream?.signal(info.name);
      accept?.();
    });
    session.on('shell', (accept, reject) =>
      open(accept, reject, (c, done) => c.shell(ptyOptions() ?? false, { env }, done)),
    );
    session.on('exec', (accept, reject, info) =>
      open(accept, reject, (c, done) => c.exec(info.command, { env, pty: ptyOptions() }, done)),
    );
    session.on('subsystem', (accept, reject, info) =>
      open(accept, reject, (c, done) => c.subsys(info.name, done)),
    );
  });
}

/**
 * How the bastion signs in to a guest: as the desktop's guest user (root when it names none), with
 * the portal's key, then with the guest password when the desktop has one.
 */
export function guestLogin(
  guest: { username: string; password: string },
  portalPrivateKey: string,
): { username: string; methods: (PublicKeyAuthMethod | PasswordAuthMethod)[] } {
  const username = guest.username || DEFAULT_GUEST_SSH_USER;
  const methods: (PublicKeyAuthMethod | PasswordAuthMethod)[] = [
    { type: 'publickey', username, key: portalPrivateKey },
  ];
  if (guest.username && guest.password)
    methods.push({ type: 'password', username, password: guest.password });
  return { username, methods };
}

/** Signs in to the guest (guestLogin). */
function connectGuest(
  { Client }: Ssh2,
  reach: Reach & { ok: true },
  portalKey: SshKeyPair,
): Promise<SshClient> {
  const { username, methods } = guestLogin(reach.guest, portalKey.privateKey);
  return new Promise((resolve, reject) => {
    const guest = new Client();
    guest
      .on('ready', () => resolve(guest))
      .on('error', reject)
      .connect({
        host: reach.ip,
        port: reach.target.ssh.port,
        username,
        authHandler: methods,
        readyTimeout: 15_000,
        hostVerifier: () => true,
      });
  });
}

export interface SshBastion {
  close(): Promise<void>;
  port: number;
}

export async function startSshBastion(
  app: FastifyInstance,
  options: { host: string; port: number; hostKey: SshKeyPair; portalKey: SshKeyPair },
): Promise<SshBastion> {
  const clients = new Set<Connection>();
  const onClient = (ssh2: Ssh2, client: Connection) => {
    clients.add(client);
    let reached: (Reach & { ok: true }) | undefined;
    let guest: Promise<SshClient> | undefined;
    client.on('authentication', (ctx) => {
      if (ctx.method !== 'publickey') return ctx.reject(['publickey']);
      void (async () => {
        const target = UUID.test(ctx.username)
          ? await app.bastion.byIdOrDomain({ id: ctx.username.toLowerCase() })
          : undefined;
        const key = target?.ssh.enabled
          ? keyListed(ssh2, target.ssh.authorized_keys, ctx.key.data)
          : undefined;
        if (!key) return ctx.reject(['publickey']);
        // Without a signature the client only asks whether the key would do.
        if (!ctx.signature || !ctx.blob) return ctx.accept();
        if (key.verify(ctx.blob, ctx.signature, ctx.hashAlgo) !== true)
          return ctx.reject(['publickey']);
        const reach = await reachGuest(app, target, 'ssh');
        if (!reach.ok) {
          app.log.info({ target: target?.id, reason: reach.reason }, 'bastion ssh refused');
          return ctx.reject(['publickey']);
        }
        reached = reach;
        ctx.accept();
      })().catch((err: unknown) => {
        app.log.warn({ err }, 'bastion ssh authentication failed');
        ctx.reject();
      });
    });
    client.on('ready', () => {
      if (!reached) return client.end();
      guest = connectGuest(ssh2, reached, options.portalKey);
      guest.then(
        (g) => {
          g.on('close', () => client.end());
          client.on('close', () => g.end());
        },
        (err: unknown) => {
          app.log.warn({ err, target: reached?.target.id }, 'bastion ssh: the guest refused');
          client.end();
        },
      );
      relaySession(client, guest);
    });
    client.on('error', () => undefined);
    client.on('close', () => clients.delete(client));
  };
  // The port is a plain TCP server: ssh2 is loaded by the first connection, which waits for it
  // (what the client sends meanwhile stays buffered in its socket), then every connection is
  // handed to the one ssh2 server.
  let sshServer: Promise<InstanceType<Ssh2['Server']>> | undefined;
  const sshServerOf = () =>
    (sshServer ??= ssh2Library().then(
      (ssh2) =>
        new ssh2.Server({ hostKeys: [options.hostKey.privateKey] }, (client) =>
          onClient(ssh2, client),
        ),
    ));
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    sshServerOf().then(
      (ssh) => {
        if (!socket.destroyed) ssh.injectSocket(socket);
      },
      (err: unknown) => {
        app.log.error({ err }, 'bastion ssh: ssh2 did not load');
        sshServer = undefined;
        socket.destroy();
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : options.port,
    close: () =>
      new Promise((resolve) => {
        for (const c of clients) c.end();
        for (const socket of sockets) if (!socket.destroyed) socket.end();
        server.close(() => resolve());
      }),
  };
}
