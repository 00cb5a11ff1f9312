/**
 * The rules of templates that need no database: how a row is shown, whose quota a template counts
 * in, when a template may be used, what a failed copy tells its owner, and moving a disk file.
 */
import { copyFile, mkdir, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import {
  templateToWire,
  type DeploymentRow,
  type DesktopRow,
  type TemplateRow,
} from '../../platform/db/schema.ts';
import { HypervisorError } from '../../platform/hypervisor/types.ts';
import { ApiError } from '../../platform/http/api-error.ts';
import { canManageItem, type Caller } from '../../platform/lib/ownership.ts';
import type { NamedTemplate } from './catalog-repositories.ts';
import type { Template } from '../../../../src/generated/types.ts';
import type { QuotaSubject } from '../quotas/index.ts';

/** What a desktop being read for a template shows on its card. */
export const TEMPLATE_ACTION = 'template';

/** Progress is pushed at most once per this many percent. */
export const PROGRESS_STEP = 5;

/** The template list item of a row, as `viewer` sees it. */
export function templateItem(named: NamedTemplate, viewer: Caller): Template {
  const { row } = named;
  return {
    ...templateToWire(row),
    kind: 'template',
    type: 'nonpersistent',
    user_id: row.userId,
    user_name: named.userName,
    category_name: named.categoryName,
    group_name: named.groupName,
    editable: canManageItem(viewer, { ...row, ownerRole: named.ownerRole }),
  };
}

export const subjectOf = (who: {
  userId: string;
  groupId: string;
  categoryId: string;
  role: string;
}): QuotaSubject => ({
  userId: who.userId,
  groupId: who.groupId,
  categoryId: who.categoryId,
  role: who.role,
});

export const notFound = () => new ApiError('not_found', 'Template not found', 'not_found');

/** A template whose disk is not there yet (or never will be) can not be used. */
export function assertReady(template: TemplateRow): void {
  if (template.status === 'creating')
    throw new ApiError(
      'precondition_required',
      'The template is still being created',
      'template_not_ready',
      { id: template.id },
    );
  if (template.status === 'failed')
    throw new ApiError('precondition_required', 'The template has failed', 'template_failed', {
      id: template.id,
    });
}

export const SOURCE_GONE = 'The desktop the template is made from is no longer there';

/**
 * Why a copy failed, as the template's owner is told: what went wrong, never a server path or
 * qemu-img's own words (those go to the log).
 */
export function failureDetail(err: unknown): string {
  if (err instanceof HypervisorError)
    switch (err.code) {
      case 'disk_not_found':
        return 'The disk of the desktop is missing';
      case 'already_running':
        return 'The disk of the desktop is in use by a running desktop';
      default:
        return 'The disk of the desktop could not be copied';
    }
  return err instanceof Error && err.message === SOURCE_GONE
    ? SOURCE_GONE
    : 'The disk of the template could not be made';
}

/** Moves a file, copying it when source and target are on different file systems. */
export async function moveFile(from: string, to: string): Promise<void> {
  await mkdir(dirname(to), { recursive: true });
  try {
    await rename(from, to);
  } catch (err) {
    if (!(err instanceof Error && 'code' in err && err.code === 'EXDEV')) throw err;
    await copyFile(from, to);
    await rm(from, { force: true });
  }
}

export interface Derivatives {
  templates: TemplateRow[];
  desktops: DesktopRow[];
  /** Deployments made from the template or any template derived from it. */
  deployments: DeploymentRow[];
}
