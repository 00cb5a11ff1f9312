/**
 * Starts a private OpenLDAP directory for tests: a small slapd.conf (mdb backend) in a temp dir,
 * the test directory loaded with slapadd, then slapd in the foreground on a free loopback port
 * (well under a second). Returns its URL, the service account and a stop().
 *
 * The directory `dc=school,dc=test` holds a service account (`cn=portal,ou=services`) and the
 * people of `ou=class-a,ou=people`; only the service account and a person themselves may read
 * entries, and passwords are for binding only.
 */
import { spawn, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../scripts/lib/postgres.mjs';

export const LDAP_BASE = 'dc=school,dc=test';
export const LDAP_PEOPLE = `ou=people,${LDAP_BASE}`;
export const LDAP_SERVICE_DN = `cn=portal,ou=services,${LDAP_BASE}`;
export const LDAP_SERVICE_PASSWORD = 'Service-Bind-Secret-7';

/** A person of the test directory. */
export interface LdapTestPerson {
  uid: string;
  name: string;
  password: string;
  ou: string;
}

/** The people of the test directory: students of Class A, and one more class. */
export const LDAP_PEOPLE_LIST: readonly LdapTestPerson[] = [
  { uid: 'ana.garcia', name: 'Ana Garcia', password: 'Ldap-Pass-ana1', ou: 'class-a' },
  { uid: 'marc.puig', name: 'Marc Puig', password: 'Ldap-Pass-marc1', ou: 'class-a' },
  { uid: 'joan.vila', name: 'Joan Vila', password: 'Ldap-Pass-joan1', ou: 'class-a' },
  { uid: 'laia.roca', name: 'Laia Roca', password: 'Ldap-Pass-laia1', ou: 'class-b' },
];

export interface Slapd {
  url: string;
  stop: () => Promise<void>;
}

const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

function config(dir: string): string {
  return [
    'include /etc/ldap/schema/core.schema',
    'include /etc/ldap/schema/cosine.schema',
    'include /etc/ldap/schema/inetorgperson.schema',
    `pidfile ${join(dir, 'slapd.pid')}`,
    'modulepath /usr/lib/ldap',
    'moduleload back_mdb',
    'database mdb',
    'maxsize 16777216',
    `suffix "${LDAP_BASE}"`,
    `rootdn "cn=admin,${LDAP_BASE}"`,
    `directory ${join(dir, 'db')}`,
    'access to attrs=userPassword by anonymous auth by * none',
    `access to * by dn.exact="${LDAP_SERVICE_DN}" read by self read by * none`,
    '',
  ].join('\n');
}

function directory(): string {
  const ous = [...new Set(LDAP_PEOPLE_LIST.map((p) => p.ou))];
  const entries = [
    `dn: ${LDAP_BASE}\nobjectClass: dcObject\nobjectClass: organization\ndc: school\no: School`,
    `dn: ou=services,${LDAP_BASE}\nobjectClass: organizationalUnit\nou: services`,
    `dn: ${LDAP_SERVICE_DN}\nobjectClass: person\ncn: portal\nsn: portal\nuserPassword: ${LDAP_SERVICE_PASSWORD}`,
    `dn: ${LDAP_PEOPLE}\nobjectClass: organizationalUnit\nou: people`,
    ...ous.map((ou) => `dn: ou=${ou},${LDAP_PEOPLE}\nobjectClass: organizationalUnit\nou: ${ou}`),
    ...LDAP_PEOPLE_LIST.map((p) =>
      [
        `dn: uid=${p.uid},ou=${p.ou},${LDAP_PEOPLE}`,
        'objectClass: inetOrgPerson',
        `uid: ${p.uid}`,
        `cn: ${p.name}`,
        `sn: ${p.name.split(' ').at(-1) ?? p.name}`,
        `mail: ${p.uid}@school.test`,
        `ou: ${p.ou}`,
        `userPassword: ${p.password}`,
      ].join('\n'),
    ),
  ];
  return `${entries.join('\n\n')}\n`;
}

/** A private slapd with the test directory (see the file comment). */
export async function startSlapd(): Promise<Slapd> {
  const dir = mkdtempSync(join(tmpdir(), 'vdi-slapd-'));
  mkdirSync(join(dir, 'db'));
  const conf = join(dir, 'slapd.conf');
  writeFileSync(conf, config(dir));
  writeFileSync(join(dir, 'directory.ldif'), directory());
  execFileSync('slapadd', ['-f', conf, '-l', join(dir, 'directory.ldif')], { stdio: 'pipe' });
  const port = await freePort();
  const url = `ldap://127.0.0.1:${port}`;
  const child = spawn('slapd', ['-f', conf, '-h', `${url}/`, '-d', '0'], { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = Date.now() + 10_000;
  while (!(await listening(port))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`slapd did not start on ${url}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url,
    stop: async () => {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await Promise.race([exited, new Promise((r) => setTimeout(r, 3000))]);
        if (child.exitCode === null) child.kill('SIGKILL');
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
