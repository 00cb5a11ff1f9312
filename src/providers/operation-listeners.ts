/** Followers of the calls' outcomes, whichever screen made them. */
import type { ApiError } from './api-error';

/** Called after a call succeeded, with its operation key and path parameters. */
export type OperationSuccessListener = (
  key: string,
  params: Readonly<Record<string, string | number>>,
) => void;

const successListeners = new Set<OperationSuccessListener>();

/**
 * Follows successful calls (a desktop started, whichever screen started it); returns the
 * function that stops following. A listener that throws does not fail the call.
 */
export function onOperationSuccess(listener: OperationSuccessListener): () => void {
  successListeners.add(listener);
  return () => successListeners.delete(listener);
}

export function notifySuccess(
  key: string,
  params: Readonly<Record<string, string | number>>,
): void {
  for (const listener of successListeners) {
    try {
      listener(key, params);
    } catch (error) {
      console.warn('operation listener', error);
    }
  }
}

/** Called after a call failed with an answer, with its operation key, path parameters and error. */
export type OperationFailureListener = (
  key: string,
  params: Readonly<Record<string, string | number>>,
  error: ApiError,
) => void;

const failureListeners = new Set<OperationFailureListener>();

/**
 * Follows refused calls (a start refused for the GPU plan, whichever screen asked); returns the
 * function that stops following. The call still rejects as before; a listener that throws does
 * not change that.
 */
export function onOperationFailure(listener: OperationFailureListener): () => void {
  failureListeners.add(listener);
  return () => failureListeners.delete(listener);
}

export function notifyFailure(
  key: string,
  params: Readonly<Record<string, string | number>>,
  error: ApiError,
): void {
  for (const listener of failureListeners) {
    try {
      listener(key, params, error);
    } catch (cause) {
      console.warn('operation listener', cause);
    }
  }
}
