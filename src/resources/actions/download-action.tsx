/**
 * The `downloadFile` action handler: calls the operation named by the action's `param.operation`
 * for the record (its id as `id`) and saves the answer as a file under the name the server gave
 * (a deployment's direct-viewer CSV), or the file a JSON answer describes (`{content, mime, name,
 * ext}`: the VPN configuration), after a confirmation when the action asks one.
 */
import { useState } from 'react';
import { isFileDownload, saveFile as saveDescribedFile } from '@/lib/download';
import { showError } from '@/lib/error-display';
import { requestOperation, type DownloadedFile } from '@/providers/http-client';
import type { ActionHandlerProps } from './action-registry';
import { openActionDialog } from './action-dialogs';
import { ActionTrigger } from './action-trigger';
import { ConfirmDialog } from './confirm-dialog';
import { operationInputs } from './operation-inputs';
import { recordTitle } from './record-actions';

/** Hands a Blob to the browser as a download. */
export function saveFile(blob: Blob, filename: string): void {
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = filename;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 0);
}

export function DownloadAction(props: ActionHandlerProps) {
  const { resource, record, name, def } = props;
  const [busy, setBusy] = useState(false);
  const operation = def.param?.operation;
  if (!operation) throw new Error(`${resource}.${name} needs param.operation`);
  const download = async (): Promise<void> => {
    const { params } = operationInputs(resource, operation, {}, record);
    const answer = await requestOperation(`${resource}.${operation}`, {
      params,
      responseType: 'file',
    });
    const file = answer as DownloadedFile | null;
    if (!file) return;
    if (file.blob.type.includes('json')) {
      const described: unknown = JSON.parse(await file.blob.text());
      if (isFileDownload(described)) {
        saveDescribedFile(described);
        return;
      }
    }
    saveFile(file.blob, file.filename ?? `${String(record.id ?? resource)}.csv`);
  };
  const run = (): void => {
    if (def.confirm) {
      openActionDialog((close) => (
        <ConfirmDialog
          resource={resource}
          action={name}
          name={recordTitle(resource, record)}
          color={def.color}
          onConfirm={download}
          onClose={close}
        />
      ));
      return;
    }
    setBusy(true);
    download()
      .catch(showError)
      .finally(() => setBusy(false));
  };
  return <ActionTrigger {...props} onClick={run} busy={busy} />;
}
