/**
 * The Guacamole protocol's text framing: an instruction is `LENGTH.VALUE` elements separated by
 * `,` and ended by `;`, the first element being the opcode; LENGTH counts Unicode code points.
 * `InstructionReader` cuts a byte stream (guacd's TCP connection) into whole instructions, so a
 * websocket message never carries half of one.
 */
import type { Socket } from 'node:net';
import { StringDecoder } from 'node:string_decoder';

/** Opcode of the tunnel's own instructions (the UUID, pings), never sent to guacd. */
export const INTERNAL_OPCODE = '';

/** Guacamole status codes the tunnel sends in `error` instructions. */
export const GuacStatus = {
  SERVER_ERROR: 0x0200,
  UPSTREAM_TIMEOUT: 0x0202,
  UPSTREAM_ERROR: 0x0203,
  RESOURCE_NOT_FOUND: 0x0204,
  RESOURCE_CONFLICT: 0x0205,
  SESSION_CLOSED: 0x020b,
  UPSTREAM_NOT_FOUND: 0x0207,
  UPSTREAM_UNAVAILABLE: 0x0208,
  CLIENT_FORBIDDEN: 0x0303,
} as const;

/** Length of a string in code points (what Guacamole element lengths count). */
export function codePoints(value: string): number {
  let n = 0;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < value.length) {
      const d = value.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

/** One instruction as text: `encode('size', 0, 640, 480)` → `4.size,1.0,3.640,3.480;`. */
export function encode(opcode: string, ...args: readonly (string | number)[]): string {
  return `${[opcode, ...args].map((v) => `${codePoints(String(v))}.${String(v)}`).join(',')};`;
}

/** An instruction read from a stream: its elements and its exact text. */
export interface Instruction {
  opcode: string;
  args: string[];
  raw: string;
}

/** Index after `count` code points from `start`, or -1 when the text ends first. */
function advance(text: string, start: number, count: number): number {
  const end = start + count;
  if (end > text.length) return -1;
  // Fast path: no surrogate pair in the slice, so code units are code points.
  if (!/[\uD800-\uDBFF]/.test(text.slice(start, end))) return end;
  let i = start;
  for (let n = 0; n < count; n++) {
    if (i >= text.length) return -1;
    const c = text.charCodeAt(i);
    i += c >= 0xd800 && c <= 0xdbff ? 2 : 1;
  }
  return i > text.length ? -1 : i;
}

export class GuacProtocolError extends Error {}

/** Parses whole instructions out of text that may arrive in pieces. */
export function parseInstructions(text: string): { instructions: Instruction[]; rest: string } {
  const instructions: Instruction[] = [];
  let start = 0;
  for (;;) {
    const elements: string[] = [];
    let pos = start;
    let complete = false;
    for (;;) {
      const dot = text.indexOf('.', pos);
      if (dot === -1) {
        if (text.length - pos > 12) throw new GuacProtocolError('element length too long');
        break;
      }
      const digits = text.slice(pos, dot);
      if (!/^\d{1,10}$/.test(digits)) throw new GuacProtocolError('bad element length');
      const end = advance(text, dot + 1, Number(digits));
      if (end === -1 || end >= text.length) break;
      elements.push(text.slice(dot + 1, end));
      const terminator = text[end];
      pos = end + 1;
      if (terminator === ';') {
        complete = true;
        break;
      }
      if (terminator !== ',') throw new GuacProtocolError('bad element terminator');
    }
    if (!complete) break;
    const [opcode = '', ...args] = elements;
    instructions.push({ opcode, args, raw: text.slice(start, pos) });
    start = pos;
  }
  return { instructions, rest: text.slice(start) };
}

/** Cuts a UTF-8 byte stream into whole instructions; refuses one longer than `maxLength`. */
export class InstructionReader {
  private readonly decoder = new StringDecoder('utf8');
  private pending = '';
  constructor(private readonly maxLength = 16 * 1024 * 1024) {}

  /** The instructions completed by this chunk, in order. */
  push(chunk: Buffer | string): Instruction[] {
    this.pending += typeof chunk === 'string' ? chunk : this.decoder.write(chunk);
    const { instructions, rest } = parseInstructions(this.pending);
    this.pending = rest;
    if (rest.length > this.maxLength) throw new GuacProtocolError('instruction too long');
    return instructions;
  }
}

/**
 * Reads instructions from a socket one at a time (the handshake); `detach` stops reading and
 * hands over what was read past the last instruction taken, for the relay to go on from.
 */
export function instructionQueue(socket: Socket) {
  const reader = new InstructionReader();
  const queue: Instruction[] = [];
  let failure: Error | undefined;
  let wake: (() => void) | undefined;
  const onData = (chunk: Buffer) => {
    try {
      queue.push(...reader.push(chunk));
    } catch (err) {
      failure = err as Error;
    }
    wake?.();
  };
  const onEnd = () => {
    failure ??= new Error('guacd closed the connection');
    wake?.();
  };
  socket.on('data', onData);
  socket.on('close', onEnd);
  socket.on('error', onEnd);
  return {
    async next(): Promise<Instruction> {
      for (;;) {
        const next = queue.shift();
        if (next) return next;
        if (failure) throw failure;
        await new Promise<void>((resolve) => (wake = resolve));
      }
    },
    detach(): { reader: InstructionReader; read: Instruction[] } {
      socket.off('data', onData);
      socket.off('close', onEnd);
      socket.off('error', onEnd);
      return { reader, read: queue.splice(0) };
    },
  };
}
