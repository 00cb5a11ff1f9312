/**
 * The engine's create and edit pages with the form extensions features register (loaded with the
 * first form opened, not with the lists).
 */
import { registerFormExtension } from '@/resources/form/form-extension-registry';
import { ResourceFormPage } from '@/resources/form/resource-form-page';
import { desktopFormExtension } from '@/features/desktop-form/desktop-form-extension';
import type { PageProps } from './pages';

registerFormExtension('desktopForm', desktopFormExtension);

export function CreatePage({ resource }: PageProps) {
  return <ResourceFormPage resource={resource} mode="create" />;
}

export function EditPage({ resource }: PageProps) {
  return <ResourceFormPage resource={resource} mode="edit" />;
}

export function OperationFormPage({ resource, kind }: PageProps) {
  return <ResourceFormPage resource={resource} mode="create" form={kind} />;
}
