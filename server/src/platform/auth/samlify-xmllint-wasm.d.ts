/**
 * Types for @authenio/samlify-xmllint-wasm (no declarations of its own): samlify's schema
 * validator, which checks a SAML message against the SAML schemas with xmllint compiled to
 * WebAssembly, in a worker thread. It resolves when the message is valid and rejects otherwise.
 */
declare module '@authenio/samlify-xmllint-wasm' {
  export function validate(xml: string): Promise<unknown>;
}
