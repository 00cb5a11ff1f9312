/**
 * The register page's form: a local account sets its password there; a person a directory or an
 * OpenID Connect provider vouched for (the register token names that provider) only gives the
 * registration code, so the password fields are not shown.
 */
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
  // The address is read as it is, not through the router: the form pages load with the login
  // route, which stays without react-router.
  useFormData() {
    const token = new URLSearchParams(window.location.search).get('token');
    return registersLocalAccount(token ?? getToken()) ? LOCAL : WITHOUT_PASSWORD;
  },
};
