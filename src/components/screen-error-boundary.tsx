/**
 * Catches a screen that fails while rendering and shows what went wrong with a way to retry,
 * instead of a blank page. The failure is logged to the console for a bug report.
 */
import { Component, type ErrorInfo, type ReactNode } from 'react';
import { Alert, Button, Group, Stack } from '@mantine/core';
import i18next from 'i18next';

export interface ScreenErrorBoundaryProps {
  children: ReactNode;
}

interface State {
  error: Error | null;
}

export class ScreenErrorBoundary extends Component<ScreenErrorBoundaryProps, State> {
  override state: State = { error: null };

  static getDerivedStateFromError(error: Error): State {
    return { error };
  }

  override componentDidCatch(error: Error, info: ErrorInfo): void {
    console.error('screen failed', error, info.componentStack);
  }

  override render(): ReactNode {
    if (!this.state.error) return this.props.children;
    return (
      <Stack maw={640} py="xl" data-testid="screen-error">
        <Alert color="red" role="alert" title={i18next.t('common:screenError.title')}>
          {i18next.t('common:screenError.body')}
        </Alert>
        <Group>
          <Button onClick={() => this.setState({ error: null })}>
            {i18next.t('common:screenError.retry')}
          </Button>
          <Button variant="default" onClick={() => window.location.reload()}>
            {i18next.t('common:screenError.reload')}
          </Button>
        </Group>
      </Stack>
    );
  }
}
