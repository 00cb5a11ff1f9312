import { describe, expect, it } from 'vitest';
import { DesktopCreate } from '@/generated/validators';
import { fieldsOf } from './field-meta';
import {
  pruneEmpty,
  schemaResolver,
  serverFieldErrors,
  validateValues,
  type SchemaResolverOptions,
} from './resolver';
import { testI18n } from './test-utils';

const options = (overrides = {}): SchemaResolverOptions => ({
  validate: DesktopCreate,
  fields: fieldsOf('DesktopCreate', overrides),
  resource: 'desktops',
  t: testI18n.t,
});

const valid = {
  template_id: 'demo-template',
  name: 'My desktop',
  hardware: { vcpus: 2, memory: 1.5, disk_size: 10 },
  guest_properties: { viewers: { browser_vnc: { options: null } } },
};

describe('schemaResolver', () => {
  it('accepts valid values and hands back the pruned values', async () => {
    const resolver = schemaResolver(() => options());
    const result = await resolver({ ...valid, description: '' }, undefined, {
      fields: {},
      shouldUseNativeValidation: false,
    });
    expect(result.errors).toEqual({});
    expect(result.values).toEqual(valid);
  });

  it('rejects memory 0.7 (multipleOf 0.5) with a translated message on hardware.memory', async () => {
    const resolver = schemaResolver(() => options());
    const result = await resolver(
      { ...valid, hardware: { ...valid.hardware, memory: 0.7 } },
      undefined,
      { fields: {}, shouldUseNativeValidation: false },
    );
    const error = (
      result.errors as Record<string, Record<string, { type: string; message: string }>>
    ).hardware?.memory;
    expect(error?.type).toBe('multipleOf');
    expect(error?.message).toBe('Memory must be a multiple of 0.5.');
  });

  it('rejects a 2-character name, showing the current length and the bound', () => {
    const { errors } = validateValues({ ...valid, name: 'ab' }, options());
    expect(errors.name).toEqual({
      type: 'minLength',
      message: 'Name must have at least 4 characters (it has 2).',
    });
  });

  it('gives an empty viewers object the one_viewer_minimum message', () => {
    const { errors } = validateValues({ ...valid, guest_properties: { viewers: {} } }, options());
    expect(errors['guest_properties.viewers']?.message).toBe('Select at least one viewer.');
    expect(errors['guest_properties.viewers']?.message).toBe(
      testI18n.t('errors:one_viewer_minimum'),
    );
  });

  it('puts required errors on the missing property, naming it', () => {
    const { errors } = validateValues({ ...valid, template_id: '', name: undefined }, options());
    expect(errors.template_id).toEqual({ type: 'required', message: 'Template is required.' });
    expect(errors.name?.type).toBe('required');
  });

  it('checks maxima tightened by the page (quota limits)', () => {
    const { errors } = validateValues(
      { ...valid, hardware: { ...valid.hardware, vcpus: 6 } },
      options({ 'hardware.vcpus': { maximum: 4 } }),
    );
    expect(errors['hardware.vcpus']?.message).toBe('vCPUs must be at most 4.');
  });
});

describe('pruneEmpty', () => {
  it('drops empty strings and undefined but keeps null, empty objects and lists', () => {
    expect(pruneEmpty({ a: '', b: null, c: undefined, d: {}, e: [], f: { g: '', h: 1 } })).toEqual({
      b: null,
      d: {},
      e: [],
      f: { h: 1 },
    });
  });
});

describe('serverFieldErrors', () => {
  it('maps the errors map of an HttpError (JSON pointers) to the fields', () => {
    const flat = serverFieldErrors(
      {
        errors: {
          '/hardware/memory': 'maximum',
          '/guest_properties/viewers': 'viewer_needs_wireguard',
        },
        params: { max: 8 },
      },
      options(),
    );
    expect(flat['hardware.memory']?.message).toBe('Memory must be at most 8.');
    expect(flat['guest_properties.viewers']?.message).toBe(
      'RDP viewers need the wireguard network.',
    );
  });

  it('puts a code that belongs to one field on that field', () => {
    const flat = serverFieldErrors({ description_code: 'new_desktop_name_exists' }, options(), {
      new_desktop_name_exists: 'name',
    });
    expect(flat.name?.message).toBe('A desktop with that name already exists.');
  });

  it('snaps item errors to the nearest field', () => {
    const flat = serverFieldErrors({ errors: { '/hardware/isos/0/id': 'type' } }, options());
    expect(Object.keys(flat)).toEqual(['hardware.isos']);
  });
});
