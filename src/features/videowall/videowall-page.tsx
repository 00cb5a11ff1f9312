/**
 * The deployment videowall (`/deployment/:id/videowall`): a toolbar (back to the deployment, its
 * name, started/total, thumbnails on/off) over a responsive grid of tiles, one per desktop, with
 * live thumbnails. A tile opens ONE console at a time in a modal (view-only, "Take control" to
 * type); closing the modal disconnects it.
 */
import '@mantine/core/styles/Modal.css';
import '@mantine/core/styles/ModalBase.css';
import '@mantine/core/styles/Overlay.css';
import '@mantine/core/styles/Skeleton.css';
import '@mantine/core/styles/Switch.css';
import '@mantine/core/styles/Badge.css';
import { lazy, Suspense, useCallback, useMemo, useState } from 'react';
import {
  Alert,
  Badge,
  Button,
  Group,
  Loader,
  Modal,
  Skeleton,
  Stack,
  Switch,
  Text,
  Title,
} from '@mantine/core';
import { IconArrowLeft, IconLayoutGrid } from '@tabler/icons-react';
import { Link, useParams } from 'react-router';
import { useTranslation } from 'react-i18next';
import { translateError } from '@/lib/error-display';
import { routeHref } from '@/resources/actions/available-actions';
import { useThumbnailScheduler } from './thumbnail-scheduler';
import { useDeploymentWall } from './use-deployment-wall';
import { VideowallGrid } from './videowall-grid';
import { SCREEN_STATES } from './videowall-tile';
import classes from './videowall.module.css';

const WallConsole = lazy(() => import('./wall-console').then((m) => ({ default: m.WallConsole })));

const SKELETON_TILES = 8;

export function VideowallPage() {
  const { t } = useTranslation();
  const { id = '' } = useParams<{ id: string }>();
  const { detail, isLoading, error } = useDeploymentWall(id);
  const [thumbnails, setThumbnails] = useState(true);
  const [openId, setOpenId] = useState<string | null>(null);
  const scheduler = useThumbnailScheduler(thumbnails);
  const onOpen = useCallback((desktopId: string) => setOpenId(desktopId), []);

  const desktops = useMemo(() => detail?.desktops ?? [], [detail?.desktops]);
  const started = useMemo(
    () => desktops.filter((d) => SCREEN_STATES.includes(d.state)).length,
    [desktops],
  );
  const opened = openId ? desktops.find((d) => d.id === openId) : undefined;
  const backHref = routeHref('deployments', 'show', id) ?? '/';

  return (
    <Stack gap="md" data-testid="videowall">
      <Group
        justify="space-between"
        gap="sm"
        role="toolbar"
        aria-label={t('common:videowall.toolbar')}
      >
        <Group gap="sm" wrap="nowrap" style={{ minWidth: 0 }}>
          <Button
            component={Link}
            to={backHref}
            variant="subtle"
            leftSection={<IconArrowLeft size={16} />}
            data-testid="videowall-back"
          >
            {t('common:videowall.back')}
          </Button>
          <IconLayoutGrid size={20} aria-hidden />
          <Title order={1} size="h3" style={{ minWidth: 0 }} lineClamp={1} title={detail?.name}>
            {detail ? detail.name : t('common:videowall.title')}
          </Title>
          <Badge
            variant="light"
            size="lg"
            data-testid="videowall-counts"
            data-started={started}
            data-total={desktops.length}
          >
            {t('common:videowall.counts', { started, total: desktops.length })}
          </Badge>
        </Group>
        <Switch
          checked={thumbnails}
          onChange={(event) => setThumbnails(event.currentTarget.checked)}
          label={t('common:videowall.thumbnails')}
          data-testid="videowall-thumbnails"
        />
      </Group>

      {error ? (
        <Alert color="red" role="alert">
          {translateError(error as never)}
        </Alert>
      ) : isLoading || !detail ? (
        <div className={classes.grid} aria-busy>
          {Array.from({ length: SKELETON_TILES }, (_, i) => (
            <Skeleton key={i} height={180} radius="md" />
          ))}
        </div>
      ) : desktops.length === 0 ? (
        <Text c="dimmed" data-testid="videowall-empty">
          {t('common:videowall.empty')}
        </Text>
      ) : (
        <VideowallGrid
          desktops={desktops}
          scheduler={scheduler}
          thumbnails={thumbnails}
          onOpen={onOpen}
        />
      )}

      <Modal
        opened={openId !== null}
        onClose={() => setOpenId(null)}
        size="min(1280px, 95vw)"
        title={t('common:videowall.consoleTitle', {
          name: opened ? opened.user_name || opened.name : '',
        })}
        closeButtonProps={{ 'aria-label': t('common:videowall.close') }}
        data-testid="videowall-modal"
      >
        {openId && (
          <Suspense fallback={<Loader aria-label={t('common:loading')} />}>
            <WallConsole key={openId} desktopId={openId} />
          </Suspense>
        )}
      </Modal>
    </Stack>
  );
}
