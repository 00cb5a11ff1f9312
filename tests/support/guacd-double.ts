/**
 * A guacd DOUBLE for tests: not guacd, and no RDP behind it. guacd is not packaged for this
 * machine, so the tests put this in its place: it listens on loopback, speaks the Guacamole
 * protocol as guacd does for `select rdp`, checks the handshake a client of guacd must make
 * (`select rdp`; after its `args`, `size`, `audio`, `video`, `image` and optionally `timezone`;
 * then `connect` with one value for each argument it asked for, the protocol version first),
 * records what it saw, answers `ready` and then draws a test pattern: a 640×480 screen in four
 * coloured quadrants (`size`, then `rect` + `cfill` per quadrant, then `sync`). A handshake that
 * breaks a rule gets guacd's `error` instruction and the connection is closed.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { encode, InstructionReader } from '../../server/src/platform/viewers/guacamole-protocol.ts';

/** The RDP arguments the double asks for, in guacd's order (a subset of guacd 1.5's list). */
export const DOUBLE_RDP_ARGS = [
  'VERSION_1_5_0',
  'hostname',
  'port',
  'domain',
  'username',
  'password',
  'width',
  'height',
  'dpi',
  'initial-program',
  'color-depth',
  'disable-audio',
  'security',
  'ignore-cert',
  'disable-auth',
  'server-layout',
  'timezone',
  'enable-font-smoothing',
  'resize-method',
  'gateway-hostname',
  'gateway-port',
] as const;

/** The test pattern: the screen's size and its four quadrants' colours (RGB). */
export const TEST_PATTERN = {
  width: 640,
  height: 480,
  quadrants: {
    topLeft: [220, 30, 30],
    topRight: [30, 200, 60],
    bottomLeft: [40, 80, 230],
    bottomRight: [250, 250, 250],
  },
} as const;

/** What one connection to the double said, in order. */
export interface DoubleSession {
  select?: string[];
  size?: string[];
  audio?: string[];
  video?: string[];
  image?: string[];
  timezone?: string[];
  /** The `connect` values by the argument names the double asked for. */
  args?: Record<string, string>;
  /** Handshake rules the client broke (empty when it made a correct one). */
  problems: string[];
  /** Opcodes the client sent after the handshake (key, mouse, size, sync, disconnect…). */
  after: { opcode: string; args: string[] }[];
  /** The double answered `ready`. */
  ready: boolean;
  /** The client closed the connection. */
  closed: boolean;
}

export interface GuacdDouble {
  port: number;
  /** Every connection so far, oldest first. */
  sessions: DoubleSession[];
  /** Connections open now. */
  open(): number;
  stop(): Promise<void>;
}

/** The instructions of the test pattern, ending with `sync`. */
export function testPatternInstructions(timestamp = Date.now()): string {
  const { width, height, quadrants } = TEST_PATTERN;
  const w = width / 2;
  const h = height / 2;
  const cells: [number, number, readonly number[]][] = [
    [0, 0, quadrants.topLeft],
    [w, 0, quadrants.topRight],
    [0, h, quadrants.bottomLeft],
    [w, h, quadrants.bottomRight],
  ];
  return [
    encode('size', 0, width, height),
    ...cells.flatMap(([x, y, [r = 0, g = 0, b = 0]]) => [
      encode('rect', 0, x, y, w, h),
      // 0xE: Guacamole's OVER composite operation (SRC, 0xC, would clear the rest of the layer).
      encode('cfill', 0xe, 0, r, g, b, 255),
    ]),
    encode('sync', timestamp),
  ].join('');
}

function handle(socket: Socket, session: DoubleSession): void {
  const reader = new InstructionReader();
  let stage: 'select' | 'handshake' | 'connected' = 'select';
  let keepAlive: NodeJS.Timeout | undefined;
  const refuse = (problem: string) => {
    session.problems.push(problem);
    socket.end(encode('error', problem, 0x0300));
  };
  socket.on('data', (chunk: Buffer) => {
    let instructions;
    try {
      instructions = reader.push(chunk);
    } catch (err) {
      return refuse(`malformed instruction: ${String(err)}`);
    }
    for (const { opcode, args } of instructions) {
      if (stage === 'connected') {
        session.after.push({ opcode, args });
        if (opcode === 'disconnect') socket.end();
        continue;
      }
      if (stage === 'select') {
        session.select = args;
        if (opcode !== 'select' || args[0] !== 'rdp')
          return refuse(`expected select rdp, got ${opcode} ${args.join(',')}`);
        stage = 'handshake';
        socket.write(encode('args', ...DOUBLE_RDP_ARGS));
        continue;
      }
      if (opcode === 'size' || opcode === 'audio' || opcode === 'video' || opcode === 'image') {
        session[opcode] = args;
        continue;
      }
      if (opcode === 'timezone') {
        session.timezone = args;
        continue;
      }
      if (opcode !== 'connect') return refuse(`unexpected ${opcode} during the handshake`);
      for (const needed of ['size', 'audio', 'video', 'image'] as const)
        if (!session[needed]) session.problems.push(`no ${needed} before connect`);
      if (args.length !== DOUBLE_RDP_ARGS.length)
        return refuse(`connect has ${args.length} values for ${DOUBLE_RDP_ARGS.length} arguments`);
      if (args[0] !== DOUBLE_RDP_ARGS[0]) session.problems.push(`version ${args[0]}`);
      session.args = Object.fromEntries(DOUBLE_RDP_ARGS.map((name, i) => [name, args[i] ?? '']));
      if (session.problems.length > 0) return refuse(session.problems.join('; '));
      stage = 'connected';
      session.ready = true;
      socket.write(encode('ready', `$double-${Math.random().toString(16).slice(2, 10)}`));
      socket.write(testPatternInstructions());
      // guacd keeps a quiet connection alive with `nop`.
      keepAlive = setInterval(() => socket.write(encode('nop')), 1000);
    }
  });
  socket.on('error', () => undefined);
  socket.on('close', () => {
    clearInterval(keepAlive);
    session.closed = true;
  });
}

/** Starts the double on a free loopback port. */
export async function startGuacdDouble(): Promise<GuacdDouble> {
  const sessions: DoubleSession[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    const session: DoubleSession = { problems: [], after: [], ready: false, closed: false };
    sessions.push(session);
    handle(socket, session);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    port,
    sessions,
    open: () => sockets.size,
    stop: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
