/**
 * Calendar benchmark: the month view of the portal's calendar (the component the bookings and
 * planning screens draw) with 2,000 events, first paint in a real browser.
 *
 *   npx tsx scripts/bench/calendar-month.ts [--events 2000] [--runs 5] [--screenshot file.png]
 *
 * - Writes a small page (a temp folder inside the repository, removed at the end) that renders
 *   `PortalCalendar` in the month view with N bookings spread over the current month, behind the
 *   app's Mantine provider and English texts; builds it with Vite (production mode) and serves it
 *   with `vite preview` on 127.0.0.1 (a free port).
 * - Per run, a fresh page in Debian Chromium (/usr/bin/chromium, 1366x768) loads it; the page
 *   records when it starts rendering and when the first frame after the calendar's commit is
 *   painted. Prints, as medians over the runs with [min–max]: navigation -> painted (download,
 *   parse and render) and render -> painted (the calendar alone), the month cells and events
 *   drawn, and PASS/FAIL against the target (navigation -> painted <= 1000 ms).
 * Exits 1 when the target fails; the browser, the preview server and the temp folder are always
 * cleaned up.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import react from '@vitejs/plugin-react';
import { chromium, type Browser } from 'playwright';
import { build, preview, type PreviewServer } from 'vite';

const { values: args } = parseArgs({
  options: {
    events: { type: 'string', default: '2000' },
    runs: { type: 'string', default: '5' },
    /** a PNG of the last run's page */
    screenshot: { type: 'string' },
  },
});
const EVENTS = Math.max(1, Number(args.events));
const RUNS = Math.max(1, Number(args.runs));
const TARGET_MS = 1000;
const ROOT = join(import.meta.dirname, '..', '..');

const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8" /><title>calendar bench</title></head>
<body><div id="root"></div><script type="module" src="./main.tsx"></script></body></html>
`;

const main = `
import '@mantine/core/styles.css';
import { MantineProvider } from '@mantine/core';
import i18next from 'i18next';
import { createRoot } from 'react-dom/client';
import { useEffect } from 'react';
import { I18nextProvider, initReactI18next } from 'react-i18next';
import common from '@/../locales/en/common.json';
import errors from '@/../locales/en/errors.json';
import resources from '@/../locales/en/resources.json';
import { PortalCalendar } from '@/components/calendar/portal-calendar';

declare global {
  interface Window { __bench?: Record<string, number>; }
}

const COUNT = ${EVENTS};
void i18next.use(initReactI18next).init({
  lng: 'en', ns: ['common', 'errors', 'resources'], defaultNS: 'common',
  resources: { en: { common, errors, resources } }, interpolation: { escapeValue: false },
  initAsync: false,
});

// N one-hour bookings over the month, seeded so every run draws the same calendar.
const today = new Date();
const first = new Date(today.getFullYear(), today.getMonth(), 1);
const days = new Date(today.getFullYear(), today.getMonth() + 1, 0).getDate();
let seed = 42;
const random = () => ((seed = (seed * 16807) % 2147483647) / 2147483647);
const events = Array.from({ length: COUNT }, (_, index) => {
  const start = new Date(first);
  start.setDate(1 + Math.floor(random() * days));
  start.setHours(Math.floor(random() * 22), random() < 0.5 ? 0 : 30, 0, 0);
  const end = new Date(start.valueOf() + (1 + Math.floor(random() * 3)) * 1800_000);
  const title = 'Booking ' + (index + 1);
  return { key: 'b' + index, title, label: title, start, end, kind: 'event' as const, record: null };
});

function Painted() {
  useEffect(() => {
    const committed = performance.now();
    requestAnimationFrame(() => {
      setTimeout(() => {
        window.__bench = {
          renderStart: renderStart,
          committed,
          painted: performance.now(),
          cells: document.querySelectorAll('.rbc-day-bg').length,
          drawn: document.querySelectorAll('[data-testid="calendar-event"]').length,
        };
      }, 0);
    });
  }, []);
  return null;
}

const renderStart = performance.now();
createRoot(document.getElementById('root')!).render(
  <I18nextProvider i18n={i18next}>
    <MantineProvider>
      <PortalCalendar
        label="Bench"
        events={events}
        view="month"
        views={['week', 'month']}
        onView={() => undefined}
        date={today}
        onNavigate={() => undefined}
        step={30}
      />
      <Painted />
    </MantineProvider>
  </I18nextProvider>,
);
`;

/** What the page records (`window.__bench`). */
type BenchWindow = Window & { __bench?: Record<string, number> };

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[middle] ?? 0)
    : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

const fmt = (values: readonly number[]): string =>
  `${median(values).toFixed(0)} ms [${Math.min(...values).toFixed(0)}–${Math.max(...values).toFixed(0)}]`;

async function run(): Promise<number> {
  const dir = mkdtempSync(join(ROOT, '.calendar-bench-'));
  let server: PreviewServer | null = null;
  let browser: Browser | null = null;
  const stop = (): void => {
    void browser?.close();
    void server?.close();
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('SIGINT', () => {
    stop();
    process.exit(130);
  });
  try {
    writeFileSync(join(dir, 'index.html'), html);
    writeFileSync(join(dir, 'main.tsx'), main);
    const config = {
      root: dir,
      configFile: false as const,
      logLevel: 'warn' as const,
      plugins: [react()],
      resolve: {
        alias: { '@common': join(ROOT, 'common'), '@': join(ROOT, 'src') },
      },
      build: { outDir: join(dir, 'dist'), emptyOutDir: true },
    };
    const started = performance.now();
    await build(config);
    console.log(`built the bench page in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    server = await preview({
      ...config,
      preview: { host: '127.0.0.1', port: 0, strictPort: false },
    });
    const url = server.resolvedUrls?.local[0];
    if (!url) throw new Error('vite preview gave no URL');

    browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
    });
    const toPaint: number[] = [];
    const renderToPaint: number[] = [];
    let cells = 0;
    let drawn = 0;
    for (let index = 0; index < RUNS; index += 1) {
      const context = await browser.newContext({ viewport: { width: 1366, height: 768 } });
      const page = await context.newPage();
      await page.goto(url);
      await page.waitForFunction(() => (window as BenchWindow).__bench !== undefined, undefined, {
        timeout: 30_000,
      });
      const bench = await page.evaluate(() => (window as BenchWindow).__bench ?? {});
      toPaint.push(bench.painted ?? Number.NaN);
      renderToPaint.push((bench.painted ?? Number.NaN) - (bench.renderStart ?? Number.NaN));
      cells = bench.cells ?? 0;
      drawn = bench.drawn ?? 0;
      if (args.screenshot && index === RUNS - 1) await page.screenshot({ path: args.screenshot });
      await context.close();
    }
    const pass = median(toPaint) <= TARGET_MS;
    console.log(`month view, ${EVENTS} events, ${RUNS} runs (Chromium 1366x768)`);
    console.log(
      `  navigation -> painted  ${fmt(toPaint)}  target <= ${TARGET_MS} ms  ${pass ? 'PASS' : 'FAIL'}`,
    );
    console.log(`  render -> painted      ${fmt(renderToPaint)}`);
    console.log(`  month cells ${cells}, events drawn ${drawn} (the rest behind "+N more")`);
    return pass ? 0 : 1;
  } finally {
    stop();
  }
}

run().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
