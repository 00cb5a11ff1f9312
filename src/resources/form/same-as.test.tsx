/**
 * The `sameAs` cross-field rules (x-constraints) in forms: a confirmation that differs from its
 * field fails on the confirmation with the sameAs message, before any call is made.
 */
import { cleanup, fireEvent, screen, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  ProfileUpdate,
  SessionUserRegister,
  SessionUserResetPassword,
} from '@/generated/validators';
import { fieldDomId, fieldsOf, type FieldsType } from './field-meta';
import { formRules, validateValues, type SchemaResolverOptions } from './resolver';
import { SchemaForm } from './schema-form';
import { renderWithProviders, testI18n } from './test-utils';
import { useSchemaForm } from './use-schema-form';

const options = (
  type: FieldsType,
  validate: SchemaResolverOptions['validate'],
  resource: string,
): SchemaResolverOptions => ({
  validate,
  rules: formRules(type),
  fields: fieldsOf(type),
  resource,
  t: testI18n.t,
});

describe('sameAs rules in the resolver', () => {
  it('finds the sameAs rule of each form type that declares one', () => {
    for (const type of [
      'ProfileUpdate',
      'SessionUserResetPassword',
      'SessionUserRegister',
    ] as const) {
      expect(formRules(type), type).toEqual([
        expect.objectContaining({
          kind: 'sameAs',
          fields: ['password_confirmation', 'password'],
          code: 'sameAs',
        }),
      ]);
    }
    expect(formRules('DesktopCreate')).toEqual([]);
  });

  it('puts the sameAs message on a reset confirmation that differs', () => {
    const { errors } = validateValues(
      { password: 'Secret-123', password_confirmation: 'Secret-124' },
      options('SessionUserResetPassword', SessionUserResetPassword, 'session'),
    );
    expect(errors).toEqual({
      password_confirmation: {
        type: 'sameAs',
        message: 'Confirm the password must match Password.',
      },
    });
  });

  it('accepts a confirmation equal to the password', () => {
    const { errors } = validateValues(
      { code: 'ABC', password: 'Secret-123', password_confirmation: 'Secret-123' },
      options('SessionUserRegister', SessionUserRegister, 'session'),
    );
    expect(errors).toEqual({});
  });

  it('leaves an empty pair alone where the fields are optional (a code-only registration)', () => {
    const { errors } = validateValues(
      { code: 'ABC' },
      options('SessionUserRegister', SessionUserRegister, 'session'),
    );
    expect(errors).toEqual({});
  });

  it('fails a profile update whose new password and confirmation differ', () => {
    const { errors } = validateValues(
      { current_password: 'old-one', password: 'Secret-123', password_confirmation: 'Secret' },
      options('ProfileUpdate', ProfileUpdate, 'profile'),
    );
    expect(errors.password_confirmation?.type).toBe('sameAs');
    expect(errors.password).toBeUndefined();
  });

  it('lets the schema message win on a confirmation that fails both', () => {
    const { errors } = validateValues(
      { password: 'Secret-123' },
      options('SessionUserResetPassword', SessionUserResetPassword, 'session'),
    );
    expect(errors.password_confirmation?.type).toBe('required');
  });
});

function ResetForm({ onValid }: { onValid: (values: unknown) => void }) {
  const handle = useSchemaForm<Record<string, unknown>>({
    type: 'SessionUserResetPassword',
    validate: SessionUserResetPassword,
    resource: 'session',
  });
  return (
    <form onSubmit={(event) => void handle.form.handleSubmit(onValid)(event)} noValidate>
      <SchemaForm handle={handle} />
      <button type="submit">send</button>
    </form>
  );
}

describe('sameAs in a rendered form', () => {
  afterEach(cleanup);

  it('shows the message on the confirmation field and does not submit', async () => {
    const onValid = vi.fn();
    renderWithProviders(<ResetForm onValid={onValid} />);
    const password = document.getElementById(fieldDomId('session', 'password'));
    const confirmation = document.getElementById(fieldDomId('session', 'password_confirmation'));
    if (!password || !confirmation) throw new Error('fields not rendered');
    fireEvent.change(password, { target: { value: 'Secret-123' } });
    fireEvent.change(confirmation, { target: { value: 'Secret-321' } });
    fireEvent.click(screen.getByRole('button', { name: 'send' }));
    expect(
      await screen.findByText('Confirm the password must match Password.'),
    ).toBeInTheDocument();
    expect(onValid).not.toHaveBeenCalled();

    fireEvent.change(confirmation, { target: { value: 'Secret-123' } });
    fireEvent.click(screen.getByRole('button', { name: 'send' }));
    await waitFor(() => expect(onValid).toHaveBeenCalledTimes(1));
    expect(onValid.mock.calls[0]?.[0]).toEqual({
      password: 'Secret-123',
      password_confirmation: 'Secret-123',
    });
  });
});
