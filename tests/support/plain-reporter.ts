/**
 * Vitest reporter that writes the test counts and each file's time to $TEST_COUNTS_FILE (JSON) so
 * scripts/test.mjs can print one plain "N passed, N failed" line over every suite and the slowest
 * files, and creates $TEST_LAST_GROUP_FILE when the first file of a later group of projects (the
 * server files that run last, mostly waiting on their guests) starts, and $TEST_TAIL_FILE when
 * fewer of that group's files are left than it has workers ($TEST_TAIL_WORKERS): a worker is idle.
 */
import { appendFileSync, writeFileSync } from 'node:fs';
import type { Reporter, TestModule, TestSpecification } from 'vitest/node';

export default class PlainReporter implements Reporter {
  private lastGroupStarted = false;
  /** The files of the later group of projects that have not ended yet. */
  private readonly lastGroupLeft = new Set<string>();

  onTestRunStart(specifications: readonly TestSpecification[]) {
    for (const spec of specifications)
      if (spec.project.config.sequence.groupOrder > 0) this.lastGroupLeft.add(spec.moduleId);
  }

  onTestModuleEnd(module: TestModule) {
    const file = process.env.TEST_TAIL_FILE;
    if (!this.lastGroupLeft.delete(module.moduleId) || !file) return;
    const workers = Number(process.env.TEST_TAIL_WORKERS ?? 1);
    if (this.lastGroupLeft.size < workers) writeFileSync(file, `${this.lastGroupLeft.size}\n`);
  }

  onTestModuleStart(module: TestModule) {
    const file = process.env.TEST_LAST_GROUP_FILE;
    if (!file || this.lastGroupStarted || !(module.project.config.sequence.groupOrder > 0)) return;
    this.lastGroupStarted = true;
    writeFileSync(file, `${module.moduleId}\n`);
  }

  onTestRunEnd(modules: readonly TestModule[]) {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    const files: { file: string; ms: number }[] = [];
    const failures: { title: string; error: string }[] = [];
    for (const m of modules) {
      // A file's time: importing it and its setup files, then its tests and hooks.
      const d = m.diagnostic();
      files.push({
        file: m.moduleId,
        ms: Math.round(d.collectDuration + d.setupDuration + d.duration),
      });
      for (const t of m.children.allTests()) {
        const state = t.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') {
          failed++;
          const error = t.result().errors?.[0];
          failures.push({
            title: `${m.relativeModuleId} › ${t.fullName}`,
            error: String(error?.message ?? error ?? ''),
          });
        } else skipped++;
      }
      // A file that failed outside its tests (a hook, an import) counts once as a failure.
      if (
        m.state() === 'failed' &&
        ![...m.children.allTests()].some((t) => t.result().state === 'failed')
      ) {
        failed++;
        const error = m.errors()[0];
        failures.push({ title: m.relativeModuleId, error: String(error?.message ?? '') });
      }
    }
    const file = process.env.TEST_COUNTS_FILE;
    if (file)
      appendFileSync(
        file,
        `${JSON.stringify({ suite: 'vitest', passed, failed, skipped, files, failures })}\n`,
      );
    else console.log(`${passed} passed, ${failed} failed`);
  }
}
