/**
 * Drizzle table definitions. They mirror server/migrations/*.sql, which is the source of truth for
 * the database: a column added there is added here too (the migration test compares both).
 */
import {
  bigint,
  boolean,
  integer,
  jsonb,
  pgTable,
  text,
  timestamp,
  uuid,
} from 'drizzle-orm/pg-core';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

export const categories = pgTable('categories', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  description: text('description').notNull().default(''),
  customUrlName: text('custom_url_name'),
  photo: text('photo'),
  frontend: boolean('frontend').notNull().default(true),
  maintenance: boolean('maintenance').notNull().default(false),
  quota: jsonb('quota'),
  createdAt: ts('created_at').notNull().defaultNow(),
});

export const groups = pgTable('groups', {
  id: text('id').primaryKey(),
  categoryId: text('category_id').notNull(),
  name: text('name').notNull(),
  description: text('description').notNull().default(''),
  quota: jsonb('quota'),
  createdAt: ts('created_at').notNull().defaultNow(),
});

export const users = pgTable('users', {
  id: text('id').primaryKey(),
  uid: text('uid').notNull(),
  username: text('username').notNull(),
  name: text('name').notNull(),
  provider: text('provider').notNull().default('local'),
  categoryId: text('category_id').notNull(),
  groupId: text('group_id').notNull(),
  role: text('role').$type<'admin' | 'manager' | 'advanced' | 'user'>().notNull(),
  passwordHash: text('password_hash'),
  passwordResetRequired: boolean('password_reset_required').notNull().default(false),
  passwordLastUpdated: ts('password_last_updated'),
  active: boolean('active').notNull().default(true),
  email: text('email'),
  emailVerified: boolean('email_verified').notNull().default(false),
  lang: text('lang'),
  photo: text('photo'),
  quota: jsonb('quota'),
  accessed: ts('accessed'),
  disclaimerAcknowledged: boolean('disclaimer_acknowledged').notNull().default(false),
  createdAt: ts('created_at').notNull().defaultNow(),
});

export const sessions = pgTable('sessions', {
  id: uuid('id').primaryKey(),
  userId: text('user_id').notNull(),
  createdAt: ts('created_at').notNull().defaultNow(),
  expiresAt: ts('expires_at').notNull(),
  maxRenewAt: ts('max_renew_at').notNull(),
  maxAt: ts('max_at').notNull(),
  revokedAt: ts('revoked_at'),
  remoteAddr: text('remote_addr'),
});

export const loginAttempts = pgTable('login_attempts', {
  key: text('key').primaryKey(),
  count: integer('count').notNull().default(0),
  windowStart: ts('window_start').notNull().defaultNow(),
  retryAfter: ts('retry_after'),
  updatedAt: ts('updated_at').notNull().defaultNow(),
});

export const settings = pgTable('settings', {
  key: text('key').primaryKey(),
  value: jsonb('value').notNull(),
  updatedAt: ts('updated_at').notNull().defaultNow(),
});

export const templates = pgTable('templates', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  description: text('description').notNull().default(''),
  userId: text('user_id').notNull(),
  categoryId: text('category_id').notNull(),
  groupId: text('group_id').notNull(),
  hardware: jsonb('hardware').$type<Record<string, unknown>>().notNull().default({}),
  guestProperties: jsonb('guest_properties').$type<Record<string, unknown>>().notNull().default({}),
  image: jsonb('image').$type<Record<string, unknown>>().notNull().default({}),
  diskPath: text('disk_path'),
  enabled: boolean('enabled').notNull().default(true),
  allowed: jsonb('allowed').$type<Record<string, unknown>>().notNull().default({}),
  version: integer('version').notNull().default(1),
  createdAt: ts('created_at').notNull().defaultNow(),
  updatedAt: ts('updated_at').notNull().defaultNow(),
});

export const desktops = pgTable('desktops', {
  id: text('id').primaryKey(),
  userId: text('user_id').notNull(),
  categoryId: text('category_id').notNull(),
  groupId: text('group_id').notNull(),
  name: text('name').notNull(),
  description: text('description').notNull().default(''),
  type: text('type').$type<'persistent' | 'nonpersistent'>().notNull().default('persistent'),
  state: text('state').notNull().default('stopped'),
  detail: text('detail'),
  templateId: text('template_id'),
  hardware: jsonb('hardware').$type<Record<string, unknown>>().notNull().default({}),
  guestProperties: jsonb('guest_properties').$type<Record<string, unknown>>().notNull().default({}),
  image: jsonb('image').$type<Record<string, unknown>>().notNull().default({}),
  server: boolean('server').notNull().default(false),
  tag: text('tag'),
  visible: boolean('visible').notNull().default(true),
  accessed: ts('accessed').notNull().defaultNow(),
  scheduled: jsonb('scheduled')
    .$type<Record<string, unknown>>()
    .notNull()
    .default({ shutdown: false }),
  bookingId: text('booking_id'),
  currentAction: text('current_action'),
  runtime: jsonb('runtime').$type<Record<string, unknown>>().notNull().default({}),
  diskPath: text('disk_path'),
  queue: jsonb('queue').$type<{ position: number; event: string } | null>(),
  version: integer('version').notNull().default(1),
  createdAt: ts('created_at').notNull().defaultNow(),
  updatedAt: ts('updated_at').notNull().defaultNow(),
});

export const media = pgTable('media', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  description: text('description').notNull().default(''),
  kind: text('kind').$type<'iso' | 'floppy'>().notNull(),
  status: text('status').notNull().default('Downloaded'),
  url: text('url'),
  path: text('path'),
  size: bigint('size', { mode: 'number' }),
  progress: jsonb('progress'),
  userId: text('user_id').notNull(),
  categoryId: text('category_id').notNull(),
  groupId: text('group_id').notNull(),
  allowed: jsonb('allowed').$type<Record<string, unknown>>().notNull().default({}),
  version: integer('version').notNull().default(1),
  createdAt: ts('created_at').notNull().defaultNow(),
  updatedAt: ts('updated_at').notNull().defaultNow(),
});

export const recycleBin = pgTable('recycle_bin', {
  id: text('id').primaryKey(),
  ownerId: text('owner_id').notNull(),
  agentId: text('agent_id'),
  itemType: text('item_type').notNull(),
  itemName: text('item_name').notNull(),
  status: text('status').notNull().default('recycled'),
  data: jsonb('data').$type<Record<string, unknown>>().notNull().default({}),
  size: bigint('size', { mode: 'number' }).notNull().default(0),
  accessed: ts('accessed').notNull().defaultNow(),
});

export type UserRow = typeof users.$inferSelect;
export type SessionRow = typeof sessions.$inferSelect;
export type DesktopRow = typeof desktops.$inferSelect;
export type DesktopInsert = typeof desktops.$inferInsert;
