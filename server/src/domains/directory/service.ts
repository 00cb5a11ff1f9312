/**
 * Every administration operation bound to one host (the server or the command line), so both
 * run the same code and write the same audit entries.
 */
import type { AdminDeps } from './deps.ts';
import type { Actor } from '../../platform/auth/actor.ts';
import {
  createUser,
  deleteUser,
  findUsersByName,
  listUsers,
  setUserPassword,
  showUser,
  updateUser,
} from './users.ts';
import { exportUsersCsv, importUsersCsv } from './users-csv.ts';
import { findGroup, groupsCrud } from './groups.ts';
import { categoriesCrud } from './categories.ts';
import { listAudit, showAudit } from './audit.ts';
import type {
  AdminUserCreate,
  AdminUserCsvImport,
  AdminUserPassword,
  AdminUserUpdate,
} from '../../../../src/generated/types.ts';

export function adminService(deps: AdminDeps) {
  const { db } = deps;
  return {
    deps,
    users: {
      list: (a: Actor) => listUsers(db, a),
      show: (a: Actor, id: string) => showUser(db, a, id),
      create: (a: Actor, body: AdminUserCreate) => createUser(deps, a, body),
      update: (a: Actor, id: string, body: AdminUserUpdate) => updateUser(deps, a, id, body),
      setPassword: (a: Actor, id: string, body: AdminUserPassword) =>
        setUserPassword(deps, a, id, body),
      remove: (a: Actor, id: string) => deleteUser(deps, a, id),
      exportCsv: (a: Actor) => exportUsersCsv(deps, a),
      importCsv: (a: Actor, body: AdminUserCsvImport) => importUsersCsv(deps, a, body),
      findByName: (a: Actor, username: string, categoryId?: string) =>
        findUsersByName(db, a, username, categoryId),
    },
    groups: {
      ...groupsCrud(deps),
      find: (a: Actor, idOrName: string, categoryId?: string) =>
        findGroup(db, a, idOrName, categoryId),
    },
    categories: categoriesCrud(deps),
    audit: {
      list: (a: Actor) => listAudit(db, a),
      show: (a: Actor, id: string) => showAudit(db, a, id),
    },
  };
}

export type AdminService = ReturnType<typeof adminService>;
