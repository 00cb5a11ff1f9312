/**
 * A V8 CPU profile of this process over a window (node:inspector), written as a .cpuprofile file
 * (Chrome DevTools opens it) and read as shares: the top functions by self time, and the areas of
 * the request path. A sample belongs to the area of the innermost frame of its stack that is in
 * one (a native call such as writev counts for the code that made it), so the areas add up to
 * 100 % of the busy samples. Inclusive shares would mislead here: fastify runs the rest of a reply
 * inside the last onSend hook, so every hook would seem to hold the whole send.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** Starts profiling this process's main thread; the returned stop() ends it and gives the profile. */
export async function startProfile(intervalUs = 200): Promise<() => Promise<CpuProfile>> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: intervalUs });
  await session.post('Profiler.start');
  return async () => {
    const { profile } = (await session.post('Profiler.stop')) as { profile: CpuProfile };
    session.disconnect();
    return profile;
  };
}

/** Areas of the request path, matched on a frame's file and function name. */
const AREAS: readonly { name: string; match: (frame: CallFrame) => boolean }[] = [
  {
    name: 'token verification (jose, tokens.ts)',
    match: (f) => /node_modules\/jose\/|platform\/auth\/tokens\.ts/.test(f.url),
  },
  {
    name: 'auth (session, role, maintenance checks)',
    match: (f) =>
      /platform\/auth\/|node_modules\/jose\//.test(f.url) || f.functionName === 'authenticate',
  },
  {
    name: 'list handler + cache (desktops repository)',
    match: (f) => /domains\/desktops\/(desktops-repository|routes\/lifecycle)\.ts/.test(f.url),
  },
  {
    name: 'serialisation (JSON.stringify, fast-json-stringify)',
    match: (f) =>
      f.functionName === 'stringify' ||
      /fast-json-stringify|fastify\/lib\/(reply|schemas)\.js.*serial/.test(f.url),
  },
  {
    name: 'answer validation (ajv)',
    match: (f) => /node_modules\/ajv\/|fastify\/lib\/validation\.js/.test(f.url),
  },
  {
    name: 'database driver (pg, drizzle)',
    match: (f) => /node_modules\/(pg|pg-protocol|pg-pool|drizzle-orm)\//.test(f.url),
  },
  {
    name: 'route hooks (access, onSend, security headers, compression negotiation)',
    match: (f) =>
      /platform\/http\/(route|access|security-headers|request-guards|validation|compress)|@fastify\/compress/.test(
        f.url,
      ),
  },
  { name: 'compression', match: (f) => /zlib/.test(f.url) },
  { name: 'logging (pino)', match: (f) => /node_modules\/pino/.test(f.url) },
  {
    name: 'fastify core (routing, hooks, reply)',
    match: (f) => /node_modules\/(fastify|find-my-way|avvio|light-my-request)\//.test(f.url),
  },
  {
    name: 'node http + sockets',
    match: (f) =>
      /^node:(_http|http|net|stream|internal\/(streams|stream_base_commons|http))/.test(f.url),
  },
  { name: '(garbage collector)', match: (f) => f.functionName === '(garbage collector)' },
  { name: '(idle)', match: (f) => f.functionName === '(idle)' },
];

/** Where a frame is: its file relative to the repository (or node_modules), and its line. */
function whereOf(frame: CallFrame): string {
  const url = frame.url
    .replace(/^file:\/\//, '')
    .replace(/^.*\/node_modules\//, '')
    .replace(/^.*?\/(server|scripts|src|common)\//, '$1/');
  return url ? `${url}:${frame.lineNumber + 1}` : '(native)';
}

/** Writes the profile to `file` and returns its summary as lines of text. */
export function summariseProfile(profile: CpuProfile, file: string, top = 20): string[] {
  writeFileSync(file, JSON.stringify(profile));
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const selfCount = new Map<number, number>();
  for (const s of profile.samples) selfCount.set(s, (selfCount.get(s) ?? 0) + 1);
  const total = profile.samples.length;
  const idleIds = new Set(
    profile.nodes.filter((n) => n.callFrame.functionName === '(idle)').map((n) => n.id),
  );
  const busy = total - profile.samples.filter((s) => idleIds.has(s)).length;

  const selfBy = new Map<string, number>();
  for (const [id, count] of selfCount) {
    const node = byId.get(id);
    if (!node || idleIds.has(id)) continue;
    const key = `${node.callFrame.functionName || '(anonymous)'}  ${whereOf(node.callFrame)}`;
    selfBy.set(key, (selfBy.get(key) ?? 0) + count);
  }

  const areaOfFrame = (frame: CallFrame) => AREAS.find((a) => a.match(frame))?.name;
  const areaOfNode = new Map<number, string>();
  const areaOf = (id: number): string => {
    const known = areaOfNode.get(id);
    if (known !== undefined) return known;
    const node = byId.get(id);
    const up = parent.get(id);
    const area =
      (node && areaOfFrame(node.callFrame)) ?? (up === undefined ? '(other)' : areaOf(up));
    areaOfNode.set(id, area);
    return area;
  };
  const areaCount = new Map<string, number>();
  for (const [id, count] of selfCount) {
    if (idleIds.has(id)) continue;
    const area = areaOf(id);
    areaCount.set(area, (areaCount.get(area) ?? 0) + count);
  }

  const pct = (n: number, of: number) =>
    `${((100 * n) / Math.max(1, of)).toFixed(1)} %`.padStart(7);
  const lines = [
    `profile: ${file} (${total} samples, ${busy} busy; shares below are of the busy samples)`,
    'areas (each sample in the innermost area of its stack):',
    ...[...areaCount.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([name, count]) => `  ${pct(count, busy)}  ${name}`),
    `top ${top} functions (self):`,
    ...[...selfBy.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([key, count]) => `  ${pct(count, busy)}  ${key}`),
  ];
  return lines;
}
