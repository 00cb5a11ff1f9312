/**
 * Packed NOTIFY payloads: a batch's messages of one channel share notifications under
 * PostgreSQL's 8,000-byte limit, come out one by one and in order at another process, and not at
 * all at the process that sent them; a message too long to share goes alone, as it was.
 */
import { describe, expect, it } from 'vitest';
import { packPayloads, unpackPayload } from './batched-notify.ts';

const message = (i: number, size = 600) =>
  JSON.stringify({ n: i, type: 3, data: 'x'.repeat(size), uid: 'a1', nsp: '/' });

describe('packed notifications', () => {
  it('carries 1,000 messages in few notifications, each under 8,000 bytes, in order', () => {
    const messages = Array.from({ length: 1000 }, (_, i) => message(i));
    const packed = packPayloads('sender', messages);
    expect(packed.length).toBeLessThan(100);
    for (const payload of packed) expect(Buffer.byteLength(payload)).toBeLessThan(8000);
    expect(packed.flatMap((payload) => unpackPayload('listener', payload))).toEqual(messages);
  });

  it('drops what the listening process sent itself', () => {
    const packed = packPayloads('same', [message(1), message(2)]);
    expect(packed.flatMap((payload) => unpackPayload('same', payload))).toEqual([]);
  });

  it('sends a message too long to share alone and unchanged, and passes it through as it is', () => {
    const long = message(1, 7950);
    const packed = packPayloads('sender', [message(0), long, message(2)]);
    expect(packed).toContain(long);
    expect(packed.flatMap((payload) => unpackPayload('listener', payload))).toEqual(
      expect.arrayContaining([message(0), long, message(2)]),
    );
    expect(unpackPayload('listener', long)).toEqual([long]);
  });
});
