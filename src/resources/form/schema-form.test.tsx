import { act, cleanup, fireEvent, screen, waitFor } from '@testing-library/react';
import { useEffect } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import { DesktopCreate } from '@/generated/validators';
import { ApiError } from '@/providers/http-client';
import { fieldDomId, fieldsOf, visibleFields } from './field-meta';
import { SchemaForm } from './schema-form';
import { renderWithProviders, testI18n } from './test-utils';
import type { WidgetProps, WidgetRegistry } from './types';
import { useSchemaForm, type SchemaFormHandle } from './use-schema-form';

/** Stands in for the desktop feature's own widgets (same props contract). */
function TestWidget({ id, label, error }: WidgetProps) {
  return (
    <div>
      <label htmlFor={id}>{label}</label>
      <input id={id} aria-invalid={!!error} readOnly />
      {error && <span>{error}</span>}
    </div>
  );
}
const featureWidgets: WidgetRegistry = {
  templatePicker: TestWidget,
  viewerPicker: TestWidget,
  reservables: TestWidget,
  media: TestWidget,
  imagePicker: TestWidget,
};

let handleOut: SchemaFormHandle<Record<string, unknown>> | null = null;

function DesktopCreateForm({ values }: { values?: Record<string, unknown> }) {
  const handle = useSchemaForm<Record<string, unknown>>({
    type: 'DesktopCreate',
    validate: DesktopCreate,
    resource: 'desktops',
    defaultValues: values ?? {},
  });
  useEffect(() => {
    handleOut = handle;
  });
  return (
    <form onSubmit={(event) => void handle.form.handleSubmit(() => undefined)(event)} noValidate>
      <SchemaForm handle={handle} widgets={featureWidgets} />
      <button type="submit">submit</button>
    </form>
  );
}

describe('SchemaForm', () => {
  afterEach(cleanup);

  it('renders every visible generated field of DesktopCreate with its translated label', () => {
    renderWithProviders(<DesktopCreateForm />);
    const visible = visibleFields(fieldsOf('DesktopCreate'));
    expect(visible.length).toBeGreaterThan(10);
    for (const meta of visible) {
      const input = document.getElementById(fieldDomId('desktops', meta.path));
      expect(input, meta.path).not.toBeNull();
    }
    expect(screen.getByLabelText(/^Name/)).toBeRequired();
    expect(screen.getByLabelText('Memory (GB)')).toBeInTheDocument();
    expect(screen.getByLabelText('Password')).toHaveAttribute('type', 'password');
    expect(document.getElementById(fieldDomId('desktops', 'hardware.disks'))).toBeNull();
  });

  it('groups the fields under translated section headings', () => {
    renderWithProviders(<DesktopCreateForm />);
    for (const name of [
      'General',
      'Hardware',
      'Viewers',
      'Credentials',
      'Media',
      'Bookable profile',
    ]) {
      expect(screen.getByRole('heading', { level: 2, name })).toBeInTheDocument();
    }
  });

  it('shows resolver errors on the field, linked with aria-describedby', async () => {
    renderWithProviders(
      <DesktopCreateForm values={{ template_id: 't1', name: 'ab', hardware: { memory: 0.7 } }} />,
    );
    fireEvent.click(screen.getByRole('button', { name: 'submit' }));
    const memory = screen.getByLabelText('Memory (GB)');
    await waitFor(() => expect(memory).toHaveAttribute('aria-invalid', 'true'));
    const described = memory.getAttribute('aria-describedby') ?? '';
    expect(described).not.toBe('');
    expect(
      document.getElementById(described.split(' ').find((part) => part.includes('error')) ?? ''),
    ).toHaveTextContent('Memory must be a multiple of 0.5.');
    expect(
      screen.getByText('Name must have at least 4 characters (it has 2).'),
    ).toBeInTheDocument();
  });

  it('puts the field errors of an HttpError on the right fields', async () => {
    renderWithProviders(<DesktopCreateForm values={{ template_id: 't1', name: 'Desktop one' }} />);
    const error = new ApiError({
      message: 'bad',
      statusCode: 400,
      errors: { '/hardware/vcpus': 'maximum' },
      params: { max: 4 },
    });
    act(() => {
      expect(handleOut?.applyServerErrors(error)).toBe(true);
    });
    await waitFor(() => expect(screen.getByText('vCPUs must be at most 4.')).toBeInTheDocument());
    expect(screen.getByLabelText('vCPUs')).toHaveAttribute('aria-invalid', 'true');
    const conflict = new ApiError({
      message: 'dup',
      statusCode: 409,
      description_code: 'new_desktop_name_exists',
    });
    act(() => {
      handleOut?.applyServerErrors(conflict, { new_desktop_name_exists: 'name' });
    });
    await waitFor(() =>
      expect(screen.getByText(testI18n.t('errors:new_desktop_name_exists'))).toBeInTheDocument(),
    );
  });

  it('fails loudly when a field names a widget nobody registered', () => {
    const quiet = console.error;
    console.error = () => undefined;
    try {
      expect(() => renderWithProviders(<SchemaOnlyBase />)).toThrow(
        /No widget "templatePicker" registered for field "template_id"/,
      );
    } finally {
      console.error = quiet;
    }
  });
});

function SchemaOnlyBase() {
  const handle = useSchemaForm<Record<string, unknown>>({
    type: 'DesktopCreate',
    validate: DesktopCreate,
    resource: 'desktops',
  });
  return <SchemaForm handle={handle} />;
}
