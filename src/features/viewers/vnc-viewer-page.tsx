import { useParams } from 'react-router';
import { VncViewerScreen } from './vnc-viewer-screen';

/** The viewer route of the application (`/viewer/vnc/:id`). */
export function VncViewerPage() {
  const { id } = useParams<{ id: string }>();
  return <VncViewerScreen id={id} />;
}
