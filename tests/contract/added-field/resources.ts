/**
 * The stored resources server/test/added-field.test.ts adds one field to (all at once, in one
 * copy of the repository), and what it expects of each: how the probes reach a record (who logs
 * in, the body of a create, how an existing record is picked), which operations the resource has
 * (a resource without create or update says so here, with the reason), and the checks that do
 * not hold yet (`gaps`: each names a check of CHECKS and why it fails; the test fails when a gap
 * closes as well as when a new one opens, so this table stays exact).
 */

/** The field every probed resource gains: a nullable text with a pattern and its own code. */
export const FIELD = 'asset_tag';
export const LABEL = 'Asset tag';
export const CODE = 'asset_tag_format';
/** Sent by a create (and read back where there is no update). */
export const CREATED = 'AT-0001';
/** Sent by an update. */
export const UPDATED = 'AT-0002';
/** Breaks the pattern. */
export const INVALID = 'not a tag!';

/** Every check made of a resource, in report order. */
export const CHECKS = [
  /** the generated types of the entity, its show answer and its create and update bodies */
  'type',
  /** the drizzle table of its storage (src/generated/db.ts) */
  'table',
  /** the migration drizzle-kit wrote adds the column */
  'migration',
  /** the column exists after the migrations ran (PostgreSQL and PGlite) */
  'column',
  /** the create answers 2xx with the field in the body */
  'create',
  /** the update answers 2xx with the field in the body */
  'update',
  /** the row holds what was sent (or what was written, for a read-only resource) */
  'stored',
  /** the list answer carries it */
  'list',
  /** the show answer carries it */
  'show',
  /** the answer of the read that fills the edit form (`x-resource.editPrefill`) carries it */
  'editPrefill',
  /** a value breaking the pattern is a 400 with the field's code */
  'invalid',
  /** the OpenAPI document's schemas of the entity and its bodies carry it */
  'openapi',
  /** a column of the resource's table view */
  'listColumn',
  /** a line of the resource's card view (where it has one) */
  'card',
  /** an input of the resource's form that refuses a value breaking the pattern */
  'form',
] as const;
export type Check = (typeof CHECKS)[number];

/** SQL the server probe runs to find an id: the first column of the first row. */
type Pick = string;

export interface ResourceProbe {
  /** x-resource name */
  resource: string;
  /** the table that stores its records */
  table: string;
  /** seeded account the server probe logs in as */
  user: 'admin' | 'manager' | 'advanced' | 'user';
  /**
   * create: the body besides the field, or why none. In bodies `$name` is a fresh unique name,
   * `$id` the record's id, and a string starting with `SELECT ` the first value that query answers.
   */
  create: { body: Record<string, unknown> } | { none: string };
  /** update: extra body fields (`$id` is replaced by the record's id), or why none */
  update: { body?: Record<string, unknown> } | { none: string };
  /** the record probed when nothing is created (and the field written with SQL when there is no write) */
  pick?: Pick;
  /** what the server probe does to the record before writing it (desktops are edited while stopped) */
  prepare?: 'stopDesktop' | 'settleDeployment';
  /** the operation that lists the records, when it is not `list` */
  listOp?: string;
  /**
   * parameters of the list operation (`$id` = the record's id): those its path names, the others
   * sent as its query
   */
  listParams?: Record<string, string>;
  /** why the resource has no show operation */
  noShow?: string;
  /** the form probed: the create form, the edit form, or why none */
  form: 'create' | 'edit' | { none: string };
  /** the resource has a card view the field is a line of */
  card?: boolean;
  /** why the resource has no table view */
  noListColumn?: string;
  /** checks that do not hold yet, each with its reason */
  gaps?: Partial<Record<Check, string>>;
}

const HOUR = 3_600_000;
/** A 30-minute step a few days ahead (inside the seeded 30-day plan of the demo GPU). */
const ahead = (hours: number) =>
  new Date(Math.ceil(Date.now() / HOUR) * HOUR + hours * HOUR).toISOString().slice(0, 16) + '+0000';

export const RESOURCE_PROBES: readonly ResourceProbe[] = [
  {
    resource: 'desktops',
    table: 'desktops',
    user: 'user',
    create: {
      none: 'a persistent desktop copies a template disk: not probed (its body gains the field)',
    },
    update: {},
    card: true,
    pick: "SELECT d.id FROM desktops d JOIN users u ON u.id = d.user_id WHERE u.username = 'user' ORDER BY d.name LIMIT 1",
    prepare: 'stopDesktop',
    form: 'edit',
  },
  {
    resource: 'templates',
    table: 'templates',
    user: 'admin',
    create: {
      none: 'a template copies a stopped desktop disk: not probed (its body gains the field)',
    },
    update: { body: { id: '$id' } },
    pick: 'SELECT id FROM templates ORDER BY name LIMIT 1',
    noShow: 'templates have no show operation',
    form: 'create',
  },
  {
    resource: 'deployments',
    table: 'deployments',
    user: 'admin',
    create: {
      body: {
        name: '$name',
        desktop_name: '$name',
        template_id: 'demo-template',
        allowed: { users: ["SELECT id FROM users WHERE username = 'user'"] },
        hardware: { memory: 0.5, vcpus: 1 },
      },
    },
    prepare: 'settleDeployment',
    update: {},
    form: 'edit',
  },
  {
    resource: 'media',
    table: 'media',
    user: 'admin',
    create: { none: 'a medium downloads its URL: not probed (its body gains the field)' },
    update: { none: 'media have no update operation' },
    pick: 'SELECT id FROM media ORDER BY name LIMIT 1',
    noShow: 'media have no show operation',
    form: 'create',
  },
  {
    resource: 'bookings',
    table: 'bookings',
    user: 'advanced',
    create: {
      body: {
        element_id: "SELECT id FROM desktops WHERE name = 'GPU workstation'",
        element_type: 'desktop',
        start: ahead(48),
        end: ahead(49),
      },
    },
    update: { body: { start: ahead(48), end: ahead(50) } },
    listParams: { startDate: ahead(-24), endDate: ahead(24 * 7) },
    noShow: 'a booking has no show operation (its show route is the item calendar)',
    form: { none: 'bookings are made in the calendar page, not a generated form' },
    noListColumn: 'the bookings list is a bespoke page',
  },
  {
    resource: 'planning',
    table: 'planner_events',
    user: 'admin',
    create: {
      body: {
        item_type: 'gpus',
        item_id: 'demo-gpu',
        subitem_id: 'DEMO-GPU-4Q',
        start: ahead(24 * 40),
        end: ahead(24 * 41),
      },
    },
    update: { body: { start: ahead(24 * 40), end: ahead(24 * 42) } },
    listParams: { itemId: 'demo-gpu', start: ahead(-24), end: ahead(24 * 60) },
    noShow: 'plans have no show operation',
    form: { none: 'plans are drawn on the planning page, not a generated form' },
    noListColumn: 'the planning list is a bespoke page',
  },
  {
    resource: 'reservables',
    table: 'reservable_items',
    user: 'admin',
    create: { none: 'items are created in the administration (adminReservables)' },
    update: { none: 'items are changed in the administration (adminReservables)' },
    pick: "SELECT id FROM reservable_items WHERE id = 'demo-gpu'",
    listOp: 'items',
    listParams: { itemType: 'gpus' },
    noShow: 'reservable items have no show operation of their own',
    form: { none: 'no routes: read by the booking screens' },
    noListColumn: 'no routes: read by the booking screens',
  },
  {
    resource: 'adminUsers',
    table: 'users',
    user: 'admin',
    create: {
      body: {
        username: '$name',
        name: 'Probe user',
        role: 'user',
        category: 'default',
        group: 'default-users',
        password: 'Probe-password-123',
      },
    },
    update: {},
    form: 'edit',
  },
  {
    resource: 'adminGroups',
    table: 'groups',
    user: 'admin',
    create: { body: { name: '$name', category: 'default' } },
    update: {},
    form: 'edit',
  },
  {
    resource: 'adminCategories',
    table: 'categories',
    user: 'admin',
    create: { body: { name: '$name' } },
    update: {},
    form: 'edit',
  },
  {
    resource: 'adminReservables',
    table: 'reservable_items',
    user: 'admin',
    create: { body: { name: '$name' } },
    update: {},
    form: 'edit',
  },
  {
    resource: 'adminReservableProfiles',
    table: 'reservable_profiles',
    user: 'admin',
    create: {
      body: {
        id: '$name',
        item_id: 'demo-gpu',
        name: '$name',
        profile: '8Q',
        units: 1,
      },
    },
    update: {},
    form: 'edit',
  },
  {
    resource: 'adminBookingPriorities',
    table: 'booking_priorities',
    user: 'admin',
    create: { body: { rule_group: 'probe', name: '$name' } },
    update: {},
    form: 'edit',
  },
  {
    resource: 'audit',
    table: 'audit_log',
    user: 'admin',
    create: { none: 'entries are written by the writes they record' },
    update: { none: 'entries never change' },
    // after the administration's writes, which add the entries
    pick: 'SELECT id FROM audit_log ORDER BY at LIMIT 1',
    form: { none: 'the audit log is read-only' },
    gaps: {
      stored:
        'entries are append-only (UPDATE is refused) and appendAudit lists its columns by hand: nothing writes it',
      list: 'nothing was stored to list',
      show: 'nothing was stored to show',
    },
  },
];
