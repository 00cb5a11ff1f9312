/**
 * Icon registry: the schema names icons semantically (`x-menu`, `x-ui.icon`, `x-actions`) and this
 * table maps each name to one tabler icon, imported by name so the build keeps only these.
 * `icon.test.tsx` walks the generated tables and fails when a schema icon has no entry here.
 */
import type { ComponentType } from 'react';
import {
  IconAlertTriangle,
  IconArrowLeft,
  IconArrowsExchange,
  IconBan,
  IconBook,
  IconCalendar,
  IconCalendarCog,
  IconCheck,
  IconChevronDown,
  IconChevronUp,
  IconCircle,
  IconCircleCheck,
  IconClock,
  IconCopy,
  IconDatabase,
  IconDeviceDesktop,
  IconDisc,
  IconDots,
  IconDownload,
  IconEye,
  IconEyeOff,
  IconFingerprint,
  IconHelp,
  IconHourglass,
  IconId,
  IconKey,
  IconKeyOff,
  IconLanguage,
  IconLink,
  IconLayoutGrid,
  IconLoader2,
  IconLock,
  IconLogout,
  IconMail,
  IconNetwork,
  IconPencil,
  IconPlayerPlay,
  IconPlayerStop,
  IconPlus,
  IconPower,
  IconRefresh,
  IconResize,
  IconRestore,
  IconRotateClockwise,
  IconSearch,
  IconSend,
  IconSettings,
  IconShieldLock,
  IconShieldOff,
  IconStack2,
  IconTemplate,
  IconToggleLeft,
  IconToggleRight,
  IconTrash,
  IconUpload,
  IconUser,
  IconUserPlus,
  IconUsers,
  IconX,
  type IconProps as TablerIconProps,
  IconUsersGroup,
  IconServer,
  IconServer2,
  IconCategory,
  IconCertificate,
  IconCpu,
  IconAdjustments,
  IconHistory,
} from '@tabler/icons-react';

const ICONS: Readonly<Record<string, ComponentType<TablerIconProps>>> = {
  'alert-triangle': IconAlertTriangle,
  'arrow-left': IconArrowLeft,
  book: IconBook,
  calendar: IconCalendar,
  'calendar-cog': IconCalendarCog,
  cancel: IconBan,
  check: IconCheck,
  'chevron-down': IconChevronDown,
  'chevron-up': IconChevronUp,
  circle: IconCircle,
  'circle-check': IconCircleCheck,
  clock: IconClock,
  copy: IconCopy,
  database: IconDatabase,
  deployment: IconStack2,
  desktop: IconDeviceDesktop,
  disc: IconDisc,
  dots: IconDots,
  download: IconDownload,
  edit: IconPencil,
  eye: IconEye,
  'eye-off': IconEyeOff,
  help: IconHelp,
  hourglass: IconHourglass,
  key: IconKey,
  'key-off': IconKeyOff,
  language: IconLanguage,
  link: IconLink,
  'layout-grid': IconLayoutGrid,
  loader: IconLoader2,
  lock: IconLock,
  logout: IconLogout,
  mail: IconMail,
  play: IconPlayerPlay,
  'player-play': IconPlayerPlay,
  plus: IconPlus,
  power: IconPower,
  refresh: IconRefresh,
  reset: IconRotateClockwise,
  resize: IconResize,
  restore: IconRestore,
  search: IconSearch,
  send: IconSend,
  settings: IconSettings,
  'shield-lock': IconShieldLock,
  fingerprint: IconFingerprint,
  'shield-off': IconShieldOff,
  stop: IconPlayerStop,
  template: IconTemplate,
  transfer: IconArrowsExchange,
  'toggle-off': IconToggleLeft,
  'toggle-on': IconToggleRight,
  trash: IconTrash,
  upload: IconUpload,
  user: IconUser,
  'user-plus': IconUserPlus,
  users: IconUsers,
  'users-group': IconUsersGroup,
  server: IconServer,
  network: IconNetwork,
  nodes: IconServer2,
  id: IconId,
  category: IconCategory,
  certificate: IconCertificate,
  cpu: IconCpu,
  adjustments: IconAdjustments,
  history: IconHistory,
  x: IconX,
};

/** Every semantic icon name the registry knows. */
export const iconNames: readonly string[] = Object.keys(ICONS);

/** True when `name` has an icon in the registry. */
export function hasIcon(name: string): boolean {
  return Object.hasOwn(ICONS, name);
}

export interface IconProps {
  /** Semantic icon name from the schema (`desktop`, `trash`...); an unknown name throws. */
  name: string;
  /** Width and height in px or any CSS length; default 20. */
  size?: number | string;
  /** Stroke width; default 1.75. */
  stroke?: number;
  /** Extra class for the svg element. */
  className?: string;
}

/** Renders a schema icon. Decorative (`aria-hidden`): it always sits next to a visible label. */
export function Icon({ name, size = 20, stroke = 1.75, className }: IconProps) {
  if (!hasIcon(name)) {
    throw new Error(
      `Unknown icon "${name}": register it in src/components/icon.tsx (known: ${iconNames.join(', ')})`,
    );
  }
  const Component = ICONS[name] as ComponentType<TablerIconProps>;
  return (
    <Component
      size={size}
      stroke={stroke}
      className={className}
      aria-hidden="true"
      focusable="false"
      data-icon={name}
    />
  );
}
