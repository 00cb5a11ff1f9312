import { describe, expect, it } from 'vitest';
import { testI18n } from '../form/test-utils';
import { actionDoneMessage, ownDoneMessage } from './action-done';
import { recordName, recordTitle, titleWithName } from './record-operation';

const t = testI18n.t;

describe('the notice of a done action', () => {
  it('tells the result by the record name, not the verb', () => {
    expect(actionDoneMessage(t, 'desktops', 'delete', 'Delete', 'Lab')).toBe(
      '“Lab” moved to the recycle bin',
    );
    expect(actionDoneMessage(t, 'desktops', 'deletePermanent', 'Delete', 'Lab')).toBe(
      '“Lab” deleted for good',
    );
    expect(actionDoneMessage(t, 'media', 'delete', 'Delete', 'Rescue ISO')).toBe(
      '“Rescue ISO” deleted',
    );
    expect(actionDoneMessage(t, 'desktops', 'updateName', 'Rename', 'Lab')).toBe(
      'Rename “Lab”: done',
    );
    expect(actionDoneMessage(t, 'settings', 'updateMaintenance', 'Edit maintenance', '')).toBe(
      'Edit maintenance: done',
    );
  });

  it('has its own text for a restore, and none for a start', () => {
    expect(ownDoneMessage(t, 'recycle-bins', 'restore', 'Lab')).toBe('“Lab” restored');
    expect(ownDoneMessage(t, 'desktops', 'start', 'Lab')).toBeNull();
  });
});

describe('the title of an action dialog', () => {
  it('names the record, and never by its id', () => {
    const disk = { id: '3f1c9a52-0000-4000-8000-000000000001', status: 'ready' };
    expect(recordName('storage', disk)).toBe('');
    expect(titleWithName('Increase size', recordName('storage', disk))).toBe('Increase size');
    expect(titleWithName('Start', recordName('desktops', { id: 'd1', name: 'Lab' }))).toBe(
      'Start · Lab',
    );
    expect(recordTitle('storage', disk)).toBe(disk.id);
  });
});
