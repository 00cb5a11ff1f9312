// Measurement preload for benchmarks: `node --import ./scripts/lib/event-loop-probe.mjs <server>`.
// Runs inside the measured process and prints one line every BENCH_PROBE_MS (10 s by default):
// `event-loop-probe {"at":…,"lagP50Ms":…,"lagP99Ms":…,"lagMaxMs":…,"rssBytes":…,"heapUsedBytes":…,"cpuMs":…}`.
// Lag is how late a 10 ms timer fires (the histogram's value minus its resolution), over the last
// window only; cpuMs is the process's CPU time (user + system) since it started. Nothing is exposed over the network; a process started without it is unchanged.
import { monitorEventLoopDelay } from 'node:perf_hooks';

const RESOLUTION_MS = 10;
const everyMs = Number(process.env.BENCH_PROBE_MS ?? 10_000);
const histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
histogram.enable();

const lag = (ns) => Math.max(0, ns / 1e6 - RESOLUTION_MS);
const timer = setInterval(() => {
  const memory = process.memoryUsage();
  const line = {
    at: Date.now(),
    lagP50Ms: lag(histogram.percentile(50)),
    lagP99Ms: lag(histogram.percentile(99)),
    lagMaxMs: lag(histogram.max),
    rssBytes: memory.rss,
    heapUsedBytes: memory.heapUsed,
    cpuMs: (process.cpuUsage().user + process.cpuUsage().system) / 1000,
  };
  histogram.reset();
  process.stdout.write(`event-loop-probe ${JSON.stringify(line)}\n`);
}, everyMs);
timer.unref();
