import { Button, type ButtonProps } from '@mantine/core';
import type { ReactNode } from 'react';
import { useRequestPending } from '@/lib/pending';

export interface SubmitButtonProps extends ButtonProps {
  /** Button content. */
  children: ReactNode;
  /** Optional click handler (the form's submit otherwise). */
  onClick?: () => void;
}

/** Submit button disabled while any request is in flight. */
export function SubmitButton({ children, disabled, ...props }: SubmitButtonProps) {
  const pending = useRequestPending();
  return (
    <Button
      type="submit"
      disabled={disabled || pending}
      data-pending={pending || undefined}
      {...props}
    >
      {children}
    </Button>
  );
}
