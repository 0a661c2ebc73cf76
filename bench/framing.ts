/**
 * Framing advice runs the person analysis inside the HTTP process. This measures what that costs the other
 * requests: the latency of `GET /api/v1/health` (the cheapest call, so it shows the event loop's delays) with no
 * framing, with one camera at the GUI's pace (a frame, then 700 ms), and with frames sent back to back,
 * and the framing calls' own latency and the server's CPU. The appliance runs in a child process as in
 * production (`server/index.ts`), with the test engines only doing nothing.
 *
 * Usage: npm run bench:framing [-- --seconds 10]
 */
import { resolve } from 'node:path';
import sharp from 'sharp';
import { benchEngines, cpuMs, startServerChild } from './helpers/server-process.ts';
import { summarize, type LatencySummary } from './helpers/stats.ts';

const PERSON = resolve(import.meta.dirname, '..', '..', 'shared', 'fixtures', 'people', 'viton_00034_00.jpg');
const secondsArg = process.argv.indexOf('--seconds');
const SECONDS = secondsArg > 0 ? Number(process.argv[secondsArg + 1]) : 10;
/** Health checks are sent this often, each on its own (never more than one in flight). */
const PROBE_EVERY_MS = 20;

const server = await startServerChild({ engines: benchEngines(600_000) });
const headers = { Authorization: `Bearer ${server.adminKey}` };
// A frame as the GUI sends it: the preview scaled to a 256 px long side, as JPEG.
const frame = await sharp(PERSON).resize(192, 256).jpeg({ quality: 80 }).toBuffer();

async function timed(call: () => Promise<Response>): Promise<number> {
  const started = performance.now();
  const res = await call();
  await res.arrayBuffer();
  if (!res.ok) throw new Error(`${res.status} ${res.url}`);
  return performance.now() - started;
}

const health = () => timed(() => fetch(`${server.url}/api/v1/health`, { headers }));
const advise = () =>
  timed(() =>
    fetch(`${server.url}/gui/api/framing`, { method: 'POST', headers: { ...headers, 'Content-Type': 'image/jpeg' }, body: frame }),
  );

/** Health latencies over `seconds`, one probe every PROBE_EVERY_MS, while `background` runs until the end. */
async function probe(
  seconds: number,
  background: (until: number) => Promise<number[]>,
): Promise<{ health: LatencySummary; background: number[]; cpuPercent: number }> {
  const until = performance.now() + seconds * 1000;
  const cpu0 = cpuMs(server.pid);
  const t0 = performance.now();
  const running = background(until);
  const samples: number[] = [];
  while (performance.now() < until) {
    samples.push(await health());
    await new Promise((r) => setTimeout(r, PROBE_EVERY_MS));
  }
  const back = await running;
  const cpuPercent = ((cpuMs(server.pid) - cpu0) / (performance.now() - t0)) * 100;
  return { health: summarize(samples), background: back, cpuPercent };
}

try {
  await advise(); // loads the analyzer once, as the first frame of a day does
  for (let k = 0; k < 20; k++) await health();
  const idle = await probe(SECONDS, async () => []);
  // The GUI's own pace: a frame, then 700 ms (renderer/framing.ts), one camera.
  const paced = await probe(SECONDS, async (until) => {
    const calls: number[] = [];
    while (performance.now() < until) {
      calls.push(await advise());
      await new Promise((r) => setTimeout(r, 700));
    }
    return calls;
  });
  const busy = await probe(SECONDS, async (until) => {
    const calls: number[] = [];
    while (performance.now() < until) calls.push(await advise());
    return calls;
  });
  const f = summarize(busy.background);
  const row = (name: string, s: LatencySummary, cpu: number) =>
    `| ${name} | ${s.n} | ${s.p50.toFixed(2)} | ${s.p90.toFixed(2)} | ${s.p99.toFixed(2)} | ${s.max.toFixed(2)} | ${cpu.toFixed(0)} % |`;
  console.log(`frame ${frame.length} B (192×256 JPEG); ${SECONDS} s per phase; a health check every ${PROBE_EVERY_MS} ms`);
  console.log('| GET /api/v1/health | n | p50 ms | p90 ms | p99 ms | max ms | server CPU |');
  console.log('|---|---|---|---|---|---|---|');
  console.log(row('no framing', idle.health, idle.cpuPercent));
  console.log(row('one camera at the GUI’s pace (a frame, then 700 ms)', paced.health, paced.cpuPercent));
  console.log(row('one camera, frames back to back', busy.health, busy.cpuPercent));
  console.log(
    `framing calls: n ${f.n}, p50 ${f.p50.toFixed(1)} ms, p90 ${f.p90.toFixed(1)} ms, max ${f.max.toFixed(1)} ms (${(f.n / SECONDS).toFixed(1)} a second)`,
  );
} finally {
  await server.close();
}
