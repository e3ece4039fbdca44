/**
 * Details of the benchmark's customers asked over keep-alive connections, for
 * the tools that measure what a warm detail costs a server
 * (bench/instructions.ts, bench/promoted-bytes.ts): each answer must be a 200,
 * and is read to its end and dropped.
 */
import { request, type Agent } from 'node:http';
import { code } from './clientes-fixture.js';

/**
 * `count` details of the customers `nextId` draws (their numbers), over up to
 * `connections` of `agent`'s keep-alive connections at once, with `key`.
 */
export async function askDetails(agent: Agent, base: string, key: string, count: number, nextId: () => number, connections = 1): Promise<void> {
  let left = count;
  const one = (): Promise<void> =>
    new Promise((resolve, reject) => {
      const path = `/v1/clientes/${code('C', nextId())}`;
      const req = request(`${base}${path}`, { agent, headers: { authorization: `Bearer ${key}` } }, (res) => {
        if (res.statusCode !== 200) reject(new Error(`${path}: ${res.statusCode}`));
        res.resume();
        res.on('end', resolve);
      });
      req.on('error', reject);
      req.end();
    });
  const loop = async () => {
    while (left-- > 0) await one();
  };
  await Promise.all(Array.from({ length: connections }, loop));
}
