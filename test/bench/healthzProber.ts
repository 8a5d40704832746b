/**
 * A `/healthz` client in its own process, as a load balancer or an uptime check is: it probes the
 * URL given as its argument over one keep-alive connection, a probe every 5 ms (the next one at
 * once when an answer took longer), until its stdin closes, then prints one JSON line: every
 * probe's start and end on the shared wall clock (`performance.timeOrigin + performance.now()`,
 * milliseconds). A 5 ms pace sees any stall of the server longer than 5 ms, without the prober
 * itself taking one of the machine's two cores as a back-to-back loop would.
 *
 * It runs apart from the server because a client in the server's own process waits behind the
 * server's work at each of its own steps (write the request, read the head, read the body), so it
 * measured about three ingest slices per probe, where a probe from outside waits for at most one.
 */
import { Agent, request } from 'node:http';

const arg = process.argv[2];
if (!arg) throw new Error('usage: healthzProber.ts URL');
const url: string = arg;
const agent = new Agent({ keepAlive: true, maxSockets: 1 });
const clock = () => performance.timeOrigin + performance.now();
const probes: { start: number; end: number; status: number }[] = [];
let stopping = false;
process.stdin.on('end', () => (stopping = true));
process.stdin.resume();

function probe(): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent }, (res) => {
      res.on('data', () => {});
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

// The first probe opens the connection; say ready once it is open, so the burst starts after.
await probe();
process.stdout.write('ready\n');
const PACE_MS = 5;
while (!stopping) {
  const start = clock();
  const status = await probe();
  const end = clock();
  probes.push({ start, end, status });
  const wait = PACE_MS - (end - start);
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
}
agent.destroy();
process.stdout.write(`${JSON.stringify(probes)}\n`);
