/** Type guards for list records the engine hands to feature renderers as plain objects. */
import type { Desktop, DesktopInfo } from '@/generated/types';

/** True for a desktop list record (id, name, state and viewers as the wire sends them). */
export function isDesktop(record: object): record is Desktop {
  const r = record as { id?: unknown; state?: unknown; name?: unknown; viewers?: unknown };
  return (
    typeof r.id === 'string' &&
    typeof r.state === 'string' &&
    typeof r.name === 'string' &&
    Array.isArray(r.viewers)
  );
}

/** True for a desktop show answer (`GET /domain/info/{id}`). */
export function isDesktopInfo(record: object): record is DesktopInfo {
  const r = record as { id?: unknown; kind?: unknown; name?: unknown };
  return (
    typeof r.id === 'string' &&
    typeof r.name === 'string' &&
    (r.kind === 'desktop' || r.kind === 'template')
  );
}
