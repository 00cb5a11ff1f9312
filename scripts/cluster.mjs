// `npm run cluster -- --nodes 2 [--port 8080]`: the scaled-out topology on this machine. Installs
// and builds what is missing as `npm start` does, then starts a private PostgreSQL, the portal
// nodes and HAProxy in front of them (scripts/lib/cluster.ts), prints the addresses and runs
// until Ctrl-C, which stops everything and removes the cluster's data.
import { parseArgs } from 'node:util';
import { prepare } from './lib/prepare.mjs';

const log = (msg) => console.log(`[cluster] ${msg}`);
const { values } = parseArgs({
  options: {
    nodes: { type: 'string', default: '2' },
    port: { type: 'string', default: process.env.PORT ?? '8080' },
  },
});
const nodes = Number(values.nodes);
const port = Number(values.port);
if (!Number.isInteger(nodes) || nodes < 1 || nodes > 8) {
  log('--nodes takes a whole number from 1 to 8');
  process.exit(2);
}
if (!Number.isInteger(port) || port < 1 || port + nodes > 65535) {
  log('--port takes a free TCP port (the nodes take the ones after it)');
  process.exit(2);
}

await prepare({ log, system: { forCluster: true } });

// The cluster code is TypeScript shared with the tests: tsx loads it (installed by now).
const { register } = await import('tsx/esm/api');
register();
const { startCluster } = await import('./lib/cluster.ts');

log(`starting PostgreSQL, ${nodes} node(s) and HAProxy`);
const cluster = await startCluster({ nodes, port });
log(`portal (through HAProxy): ${cluster.url}`);
for (const node of cluster.nodes) log(`${node.name}: ${node.url} (direct)`);
log(`PostgreSQL: ${cluster.databaseUrl}`);
log('the demo logins are printed above by node-1; Ctrl-C stops the cluster and removes its data');

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'])
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    log('stopping');
    void cluster.stop().then(() => process.exit(0));
  });
