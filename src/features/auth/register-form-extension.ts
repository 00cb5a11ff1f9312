/**
 * The register page's form: a local account sets its password there; a person a directory or an
 * OpenID Connect provider vouched for (the register token names that provider) only gives the
 * registration code, so the password fields are not shown.
 */
import { useSearchParams } from 'react-router';
import type { FormData, FormExtension } from '@/resources/form/form-extension-registry';
import { decodeToken, getToken } from '@/lib/token';

const LOCAL: FormData = { loading: false, error: null, options: {}, overrides: {} };
const WITHOUT_PASSWORD: FormData = {
  ...LOCAL,
  overrides: { password: { hidden: true }, password_confirmation: { hidden: true } },
};

/** Whether the register token (the page's `?token=`, else the stored one) is a local account's. */
export function registersLocalAccount(token: string | null): boolean {
  const provider = decodeToken(token)?.provider;
  return provider === undefined || provider === 'local';
}

export const registerFormExtension: FormExtension = {
  useFormData() {
    const [search] = useSearchParams();
    return registersLocalAccount(search.get('token') ?? getToken()) ? LOCAL : WITHOUT_PASSWORD;
  },
};
