/**
 * Every administration operation bound to one host (the server or the command line), so both
 * run the same code and write the same audit entries.
 */
import type { AdminDeps } from './deps.ts';
import type { Actor } from '../../platform/auth/actor.ts';
import { findUsersByName, resetUserSecondFactors, setUserPassword } from './users.ts';
import { usersCrud } from './users-crud.ts';
import { exportUsersCsv, importUsersCsv } from './users-csv.ts';
import { findGroup, groupsCrud } from './groups.ts';
import { categoriesCrud } from './categories.ts';
import { listAudit, showAudit } from './audit.ts';
import type { AdminUserCsvImport, AdminUserPassword } from '../../../../src/generated/types.ts';

export function adminService(deps: AdminDeps) {
  const { db } = deps;
  const users = usersCrud(deps);
  return {
    deps,
    users: {
      ...users,
      setPassword: (a: Actor, id: string, body: AdminUserPassword) =>
        setUserPassword(deps, a, id, body),
      resetSecondFactors: (a: Actor, id: string) => resetUserSecondFactors(deps, a, id),
      exportCsv: (a: Actor) => exportUsersCsv(users, a),
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
