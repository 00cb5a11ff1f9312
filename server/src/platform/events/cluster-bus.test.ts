/**
 * The cluster bus's envelopes: messages published together share notifications under
 * PostgreSQL's 8,000-byte limit and come out whole and in order; each envelope starts with its
 * sender, which the sender's own listener skips without parsing.
 */
import { describe, expect, it } from 'vitest';
import { envelopesOf, splitMessage, type ClusterMessage } from './cluster-bus.ts';

describe('cluster bus envelopes', () => {
  it('packs 1,000 desktop changes into few notifications, each under 8,000 bytes, in order', () => {
    const messages: ClusterMessage[] = Array.from({ length: 1000 }, (_, i) => ({
      kind: 'desktop.changed',
      id: `desktop-${i}`,
      ownerId: `owner-${i}`,
      change: 'updated',
      state: 'stopped',
    }));
    const envelopes = envelopesOf(messages, 'node-1#abc');
    expect(envelopes.length).toBeLessThan(60);
    for (const envelope of envelopes) {
      expect(Buffer.byteLength(envelope)).toBeLessThan(8000);
      expect(envelope.startsWith('{"from":"node-1#abc","n":')).toBe(true);
    }
    const parsed = envelopes.map((e) => JSON.parse(e) as { n: number; messages: ClusterMessage[] });
    expect(parsed.map((e) => e.n)).toEqual(parsed.map((_, i) => i));
    expect(parsed.flatMap((e) => e.messages)).toEqual(messages);
  });

  it('sends the ids of a large revocation in parts that each fit', () => {
    const ids = Array.from(
      { length: 1000 },
      (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    );
    const envelopes = envelopesOf(splitMessage({ kind: 'sessions.revoked', ids }), 'cli');
    for (const envelope of envelopes) expect(Buffer.byteLength(envelope)).toBeLessThan(8000);
    const sent = envelopes.flatMap(
      (e) => (JSON.parse(e) as { messages: { ids: string[] }[] }).messages,
    );
    expect(sent.flatMap((m) => m.ids)).toEqual(ids);
  });
});
