/**
 * `mirador serve --workers 2` against `--workers 1` (issue 4 target 5, issue 5
 * point 6): list requests, alternating rounds. Nothing is pinned here: the
 * point is what a second HTTP process gains on this 2-core machine, where the
 * load generator needs a core too.
 */
import type { BenchContext } from './bench-context.js';
import type { BenchDatabase } from './databases.js';
import { waitForSegments, type Dataset } from './dataset.js';
import { runLoad, type LoadResult } from './load.js';
import { startMirador, type Server } from './processes.js';
import { fmt, median } from './report.js';

export async function workersBench(ctx: BenchContext, db: BenchDatabase, data: Dataset): Promise<void> {
  const servers: Server[] = [];
  try {
    for (const workers of [1, 2]) servers.push(await startMirador(data.env, { cpus: null, workers, name: `mirador --workers ${workers}` }));
    await waitForSegments(db.url);
    const section = ctx.report.section(
      `--workers 2 vs 1, ${db.backend}`,
      ['scenario', '1 worker req/s', 'p99 ms', '2 workers req/s', 'p99 ms', 'gain'],
      [`Server and load generator not pinned (both cores shared); ${ctx.connections} connections, ${ctx.rounds} alternating rounds of ${ctx.seconds} s, medians.`],
    );
    const scenarios = [
      { name: 'list limit=100', path: '/v1/clientes?limit=100' },
      { name: `list limit=100, offset ${data.customers - 1000}`, path: `/v1/clientes?limit=100&offset=${data.customers - 1000}` },
    ];
    for (const s of scenarios) {
      const results: LoadResult[][] = [[], []];
      const load = (server: Server, seconds: number) =>
        runLoad({ base: server.base, paths: [s.path], headers: { authorization: `Bearer ${data.key}` }, connections: ctx.connections, seconds, cpus: null });
      for (const server of servers) await load(server, 1); // warm-up: every cluster worker gets some
      for (let round = 0; round < ctx.rounds; round++) {
        const order = round % 2 === 0 ? [0, 1] : [1, 0];
        for (const i of order) results[i]!.push(await load(servers[i]!, ctx.seconds));
      }
      const rps = results.map((rs) => median(rs.map((r) => r.rps)));
      const p99 = results.map((rs) => median(rs.map((r) => r.p99Ms)));
      ctx.report.row(section, [s.name, fmt.int(rps[0]!), fmt.ms(p99[0]!), fmt.int(rps[1]!), fmt.ms(p99[1]!), `${fmt.ratio(rps[1]! / rps[0]!)}×`]);
      ctx.report.record(`${db.backend}:workers:${s.name}`, results);
    }
  } finally {
    for (const s of servers) await s.stop();
  }
}
