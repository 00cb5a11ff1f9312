/**
 * How many media downloads may run at once: a few per user and a bound for the whole server, so
 * that nobody fills the disk or the link with parallel downloads. A slot is taken before a
 * download opens its URL and given back when it ends, however it ends.
 */

export interface DownloadSlot {
  /** Gives the slot back; calling it again does nothing. */
  release(): void;
}

export class DownloadSlots {
  private readonly perUser: number;
  private readonly total: number;
  private readonly byUser = new Map<string, number>();
  private running = 0;

  constructor(limits: { perUser: number; total: number }) {
    this.perUser = limits.perUser;
    this.total = limits.total;
  }

  /** A slot for one more download of `userId`, or null when the user or the server is at its limit. */
  take(userId: string): DownloadSlot | null {
    const mine = this.byUser.get(userId) ?? 0;
    if (mine >= this.perUser || this.running >= this.total) return null;
    this.byUser.set(userId, mine + 1);
    this.running++;
    let held = true;
    return {
      release: () => {
        if (!held) return;
        held = false;
        this.running--;
        const left = (this.byUser.get(userId) ?? 1) - 1;
        if (left > 0) this.byUser.set(userId, left);
        else this.byUser.delete(userId);
      },
    };
  }

  /** Downloads running now (of one user, or in all). */
  active(userId?: string): number {
    return userId === undefined ? this.running : (this.byUser.get(userId) ?? 0);
  }

  /** The limit that refuses the next download of `userId`, or null when there is room. */
  limitReached(userId: string): { scope: 'user' | 'server'; limit: number } | null {
    if ((this.byUser.get(userId) ?? 0) >= this.perUser)
      return { scope: 'user', limit: this.perUser };
    if (this.running >= this.total) return { scope: 'server', limit: this.total };
    return null;
  }
}
