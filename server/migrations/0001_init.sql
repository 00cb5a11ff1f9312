-- Initial schema: accounts, sessions, login throttling, settings, templates, desktops, media, recycle bin.
CREATE TABLE categories (
  id text PRIMARY KEY,
  name text NOT NULL,
  description text NOT NULL DEFAULT '',
  custom_url_name text UNIQUE,
  photo text,
  frontend boolean NOT NULL DEFAULT true,
  maintenance boolean NOT NULL DEFAULT false,
  quota jsonb,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE groups (
  id text PRIMARY KEY,
  category_id text NOT NULL REFERENCES categories(id),
  name text NOT NULL,
  description text NOT NULL DEFAULT '',
  quota jsonb,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE users (
  id text PRIMARY KEY,
  uid text NOT NULL,
  username text NOT NULL,
  name text NOT NULL,
  provider text NOT NULL DEFAULT 'local',
  category_id text NOT NULL REFERENCES categories(id),
  group_id text NOT NULL REFERENCES groups(id),
  role text NOT NULL CHECK (role IN ('admin', 'manager', 'advanced', 'user')),
  password_hash text,
  password_reset_required boolean NOT NULL DEFAULT false,
  password_last_updated timestamptz,
  active boolean NOT NULL DEFAULT true,
  email text,
  email_verified boolean NOT NULL DEFAULT false,
  lang text,
  photo text,
  quota jsonb,
  accessed timestamptz,
  disclaimer_acknowledged boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (provider, category_id, uid)
);

CREATE TABLE sessions (
  id uuid PRIMARY KEY,
  user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  max_renew_at timestamptz NOT NULL,
  max_at timestamptz NOT NULL,
  revoked_at timestamptz,
  remote_addr text
);
CREATE INDEX sessions_user_idx ON sessions (user_id);

CREATE TABLE login_attempts (
  key text PRIMARY KEY,
  count integer NOT NULL DEFAULT 0,
  window_start timestamptz NOT NULL DEFAULT now(),
  retry_after timestamptz,
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE settings (
  key text PRIMARY KEY,
  value jsonb NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE templates (
  id text PRIMARY KEY,
  name text NOT NULL,
  description text NOT NULL DEFAULT '',
  user_id text NOT NULL REFERENCES users(id),
  category_id text NOT NULL REFERENCES categories(id),
  group_id text NOT NULL REFERENCES groups(id),
  hardware jsonb NOT NULL DEFAULT '{}',
  guest_properties jsonb NOT NULL DEFAULT '{}',
  image jsonb NOT NULL DEFAULT '{}',
  disk_path text,
  enabled boolean NOT NULL DEFAULT true,
  allowed jsonb NOT NULL DEFAULT '{}',
  version integer NOT NULL DEFAULT 1,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE desktops (
  id text PRIMARY KEY,
  user_id text NOT NULL REFERENCES users(id),
  category_id text NOT NULL REFERENCES categories(id),
  group_id text NOT NULL REFERENCES groups(id),
  name text NOT NULL,
  description text NOT NULL DEFAULT '',
  type text NOT NULL DEFAULT 'persistent' CHECK (type IN ('persistent', 'nonpersistent')),
  state text NOT NULL DEFAULT 'stopped',
  detail text,
  template_id text REFERENCES templates(id) ON DELETE SET NULL,
  hardware jsonb NOT NULL DEFAULT '{}',
  guest_properties jsonb NOT NULL DEFAULT '{}',
  image jsonb NOT NULL DEFAULT '{}',
  server boolean NOT NULL DEFAULT false,
  tag text,
  visible boolean NOT NULL DEFAULT true,
  accessed timestamptz NOT NULL DEFAULT now(),
  scheduled jsonb NOT NULL DEFAULT '{"shutdown": false}',
  booking_id text,
  current_action text,
  runtime jsonb NOT NULL DEFAULT '{}',
  version integer NOT NULL DEFAULT 1,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (user_id, name)
);
CREATE INDEX desktops_user_name_idx ON desktops (user_id, name);
CREATE INDEX desktops_state_idx ON desktops (state);
CREATE INDEX desktops_tag_idx ON desktops (tag) WHERE tag IS NOT NULL;

CREATE TABLE media (
  id text PRIMARY KEY,
  name text NOT NULL,
  description text NOT NULL DEFAULT '',
  kind text NOT NULL CHECK (kind IN ('iso', 'floppy')),
  status text NOT NULL DEFAULT 'Downloaded',
  url text,
  path text,
  size bigint,
  progress jsonb,
  user_id text NOT NULL REFERENCES users(id),
  category_id text NOT NULL REFERENCES categories(id),
  group_id text NOT NULL REFERENCES groups(id),
  allowed jsonb NOT NULL DEFAULT '{}',
  version integer NOT NULL DEFAULT 1,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX media_user_idx ON media (user_id);

CREATE TABLE recycle_bin (
  id text PRIMARY KEY,
  owner_id text NOT NULL REFERENCES users(id),
  agent_id text,
  item_type text NOT NULL,
  item_name text NOT NULL,
  status text NOT NULL DEFAULT 'recycled',
  data jsonb NOT NULL DEFAULT '{}',
  size bigint NOT NULL DEFAULT 0,
  accessed timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX recycle_bin_owner_idx ON recycle_bin (owner_id);
