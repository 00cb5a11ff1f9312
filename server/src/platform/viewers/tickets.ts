/**
 * Console tickets: single use, ≤ 60 s, bound to (user, desktop, protocol) and to the login session
 * that asked for it, 256 random bits, kept hashed in memory only (a ticket never reaches a log or
 * the database). A console opened with a ticket lives only as long as that session.
 */
import { createHash, randomBytes } from 'node:crypto';

export interface TicketClaims {
  userId: string;
  desktopId: string;
  /** `rdpgw`: the access token of an RD-gateway `.rdp` file. */
  protocol: 'vnc' | 'rdp' | 'rdpgw';
  /** The login session the ticket was issued to (a ticket without one opens nothing). */
  sessionId?: string;
}

interface Entry extends TicketClaims {
  expiresAt: number;
}

const hash = (ticket: string) => createHash('sha256').update(ticket).digest('base64url');

export class TicketStore {
  private readonly entries = new Map<string, Entry>();
  constructor(private readonly ttlMs = 60_000) {}

  /** Mints a ticket; the plain value is returned once and only its hash is kept. */
  issue(claims: TicketClaims, now = Date.now()): { ticket: string; expiresAt: number } {
    this.sweep(now);
    const ticket = randomBytes(32).toString('base64url');
    const expiresAt = now + this.ttlMs;
    this.entries.set(hash(ticket), { ...claims, expiresAt });
    return { ticket, expiresAt };
  }

  /** Consumes a ticket: valid once, before its expiry, for the same protocol. */
  consume(
    ticket: string,
    protocol: TicketClaims['protocol'],
    now = Date.now(),
  ): TicketClaims | undefined {
    const key = hash(ticket);
    const entry = this.entries.get(key);
    this.entries.delete(key);
    if (!entry || entry.expiresAt < now || entry.protocol !== protocol) return undefined;
    return {
      userId: entry.userId,
      desktopId: entry.desktopId,
      protocol: entry.protocol,
      ...(entry.sessionId ? { sessionId: entry.sessionId } : {}),
    };
  }

  /** Forgets every unused ticket of a login session (it ended). */
  revokeSession(sessionId: string): void {
    for (const [k, e] of this.entries) if (e.sessionId === sessionId) this.entries.delete(k);
  }

  /** Forgets every ticket of a desktop (it stopped, or its owner changed). */
  revokeDesktop(desktopId: string): void {
    for (const [k, e] of this.entries) if (e.desktopId === desktopId) this.entries.delete(k);
  }

  private sweep(now: number): void {
    for (const [k, e] of this.entries) if (e.expiresAt < now) this.entries.delete(k);
  }
}
