/**
 * The disk copy of a template, in the background: the source desktop's disk chain flattened into
 * the template's own qcow2, its progress pushed, then the template ready (or failed with the
 * reason) and the desktop given back. Copies of this process are aborted when it closes.
 */
import { rm } from 'node:fs/promises';
import { eq } from 'drizzle-orm';
import { templates } from '../../platform/db/schema.ts';
import { failureDetail, PROGRESS_STEP, SOURCE_GONE, TEMPLATE_ACTION } from './template-rules.ts';
import type { TemplateContext } from './template-context.ts';

export type TemplateBuilder = ReturnType<typeof createTemplateBuilder>;

export function createTemplateBuilder(ctx: TemplateContext) {
  const { app } = ctx;
  /** Copies running in this process, by template id (aborted when the server closes). */
  const building = new Map<string, AbortController>();

  const writeProgress = async (id: string, percentage: number) => {
    const saved = await app.templates.update(
      id,
      { progress: { percentage } },
      { condition: eq(templates.status, 'creating') },
    );
    if (saved) await ctx.publish(id, 'templates.updated');
  };

  /** The desktop a template was read from may be used again. */
  const releaseDesktop = async (desktopId: string | null) => {
    if (!desktopId) return;
    const desktop = await app.desktops.byId(desktopId);
    if (desktop?.state === 'working' && desktop.currentAction === TEMPLATE_ACTION)
      await app.desktops.update(desktopId, { state: 'stopped', currentAction: null }, ['working']);
  };

  /**
   * Copies the source desktop's disk into the template's own, then marks the template ready (or
   * failed with the reason) and gives the desktop back. An abort (the server closing) leaves both
   * as they are for the next start to take up.
   */
  const build = async (id: string, signal: AbortSignal): Promise<void> => {
    const template = await app.templates.get(id);
    if (template?.status !== 'creating') return;
    const target = template.diskPath ?? ctx.diskPathOf(id);
    let progress = Promise.resolve();
    try {
      const desktop = template.sourceDesktopId
        ? await app.desktops.byId(template.sourceDesktopId)
        : undefined;
      if (desktop?.state !== 'working' || desktop.currentAction !== TEMPLATE_ACTION)
        throw new Error(SOURCE_GONE);
      const source = desktop.diskPath ?? app.engine.diskPath(desktop.id);
      // A target left by an earlier, interrupted run is made again from the (still locked) source.
      await rm(target, { force: true });
      let pushed = 0;
      const info = await app.hypervisor.convertDisk({
        source,
        target,
        signal,
        onProgress: (percent) => {
          if (percent < 100 && percent - pushed < PROGRESS_STEP) return;
          pushed = percent;
          // a progress write that fails is only a missed update, never a failed copy
          progress = progress
            .then(() => writeProgress(id, Math.floor(percent)))
            .catch((err: unknown) => app.log.warn({ err, template: id }, 'template progress'));
        },
      });
      await progress;
      const ready = await app.templates.update(
        id,
        { status: 'ready', progress: null, detail: null, desktopSize: info.actualSize },
        { condition: eq(templates.status, 'creating') },
      );
      if (ready) await ctx.publish(id, 'templates.updated');
      else await rm(target, { force: true });
      app.log.info({ template: id, bytes: info.actualSize }, 'template disk ready');
    } catch (err) {
      await progress;
      if (signal.aborted) return;
      const detail = failureDetail(err);
      app.log.warn({ err, template: id }, 'template disk creation failed');
      await rm(target, { force: true }).catch(() => undefined);
      const failed = await app.templates.update(
        id,
        { status: 'failed', progress: null, detail },
        { condition: eq(templates.status, 'creating') },
      );
      if (failed) await ctx.publish(id, 'templates.updated');
    }
    if (!signal.aborted) await releaseDesktop(template.sourceDesktopId);
  };

  const startBuild = (id: string) => {
    if (building.has(id)) return;
    const controller = new AbortController();
    building.set(id, controller);
    app.engine.background(
      build(id, controller.signal).finally(() => building.delete(id)),
      'template disk creation failed',
      id,
    );
  };

  return {
    releaseDesktop,
    startBuild,
    /** Stops the copies of this process; their templates stay `creating` for the next start. */
    close(): void {
      for (const controller of building.values()) controller.abort();
    },
  };
}
