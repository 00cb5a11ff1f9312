/**
 * ssh2 (some 12 MB resident), loaded at its first use: writing a missing key pair, or the SSH
 * bastion's first connection. A portal whose keys exist and whose SSH bastion nobody reaches
 * never holds it.
 */
import { lazyModule } from '../../platform/lib/lazy-module.ts';

// ssh2 is CommonJS whose named exports Node's ESM loader cannot see: its default export is the
// module.
export const ssh2Library = lazyModule(async () => (await import('ssh2')).default);
