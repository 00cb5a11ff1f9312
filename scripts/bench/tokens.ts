/**
 * Token verification cost: `npx tsx scripts/bench/tokens.ts [--tokens 10000] [--rounds 3]`.
 *
 * Signs `tokens` distinct login tokens, then verifies each once on a service that has not seen
 * them (the signature and every claim checked: what a node pays for a token another node issued)
 * and once more on the same service (the remembered answer). Prints the CPU time
 * (`process.cpuUsage`, user + system) and the wall time of each pass per 10,000 tokens, the median
 * of `rounds`, with the load average.
 */
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { TokenService } from '../../server/src/platform/auth/tokens.ts';

const { values: args } = parseArgs({
  options: {
    tokens: { type: 'string', default: '10000' },
    rounds: { type: 'string', default: '3' },
  },
});
const COUNT = Number(args.tokens);
const ROUNDS = Number(args.rounds);
const key = new TextEncoder().encode('a-bench-signing-key-of-enough-length-for-hs256-tokens');

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1] ?? NaN;
const per10k = (value: number) => (value * 10_000) / COUNT;

async function timed(work: () => Promise<void>): Promise<{ cpuMs: number; wallMs: number }> {
  const cpu = process.cpuUsage();
  const wall = performance.now();
  await work();
  const used = process.cpuUsage(cpu);
  return { cpuMs: (used.user + used.system) / 1000, wallMs: performance.now() - wall };
}

const results = { sign: [] as number[], cold: [] as number[], warm: [] as number[] };
const walls = { sign: [] as number[], cold: [] as number[], warm: [] as number[] };
for (let round = 0; round < ROUNDS; round++) {
  const issuer = new TokenService(key, 60);
  const exp = Math.floor(Date.now() / 1000) + 3600;
  const tokens: string[] = [];
  const sign = await timed(async () => {
    for (let i = 0; i < COUNT; i++)
      tokens.push(
        await issuer.signLogin({
          sessionId: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
          userId: `u${i}`,
          exp,
          data: {
            provider: 'form',
            user_id: `u${i}`,
            role_id: 'user',
            category_id: 'default',
            group_id: 'default-default',
            name: `User ${i}`,
          },
        }),
      );
  });
  const verifier = new TokenService(key, 60);
  const pass = () => async () => {
    for (const token of tokens) await verifier.verify(token);
  };
  const cold = await timed(pass());
  const warm = await timed(pass());
  for (const [name, value] of [
    ['sign', sign],
    ['cold', cold],
    ['warm', warm],
  ] as const) {
    results[name].push(value.cpuMs);
    walls[name].push(value.wallMs);
  }
}
const load = loadavg()
  .map((l) => l.toFixed(2))
  .join(' ');
for (const [name, label] of [
  ['sign', 'sign'],
  ['cold', 'verify, first time (signature and claims)'],
  ['warm', 'verify, seen before (remembered)'],
] as const)
  console.log(
    `${label}: CPU ${per10k(median(results[name])).toFixed(0)} ms per 10,000 [${results[name].map((v) => per10k(v).toFixed(0)).join(', ')}], wall ${per10k(median(walls[name])).toFixed(0)} ms`,
  );
console.log(`${COUNT} tokens, ${ROUNDS} rounds, median shown; load average ${load}`);
