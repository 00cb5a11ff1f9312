/**
 * A short document the server wrote for the user (the disclaimer): `{ title, body, footer }`, where
 * title is text and body and footer are HTML. Nothing when the answer is null (no document).
 */
import '@mantine/core/styles/Typography.css';
import { Stack, Text, Title, Typography } from '@mantine/core';
import type { PreviewProps } from './preview-registry';

interface DocumentAnswer {
  title?: string | null;
  body?: string | null;
  footer?: string | null;
}

/**
 * One block of the document's HTML. The server sanitises body and footer before answering (only
 * a, h1-h4, strong, em, p, ul, ol, li, br, sub, sup and hr remain; links are http, https or
 * mailto), so this is the one place the portal renders HTML it did not build itself; nothing else
 * may go through it.
 */
function ServerSanitisedHtml({ html, testId }: { html: string; testId: string }) {
  return <Typography data-testid={testId} dangerouslySetInnerHTML={{ __html: html }} />;
}

export function DocumentPreview({ value }: PreviewProps) {
  const answer = (value ?? null) as DocumentAnswer | null;
  if (!answer) return null;
  return (
    <Stack gap="sm" data-testid="form-document">
      {answer.title && (
        <Title order={2} size="h3">
          {answer.title}
        </Title>
      )}
      {answer.body && <ServerSanitisedHtml html={answer.body} testId="form-document-body" />}
      {answer.footer && (
        <Text component="div" size="sm" c="dimmed">
          <ServerSanitisedHtml html={answer.footer} testId="form-document-footer" />
        </Text>
      )}
    </Stack>
  );
}
