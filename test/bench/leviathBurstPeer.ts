/**
 * The burst's fake Leviath gateway in its own process, as a real `lev serve` is: building and
 * sending 10,000 frames then costs the gateway's process, not the studio server's. Prints
 * `{"url": …}` once listening; on a stdin line `{"prepare": N}` it builds and serializes N burst
 * frames and prints `prepared`; on `{"send": true}` it sends them at once and prints `sent`; it
 * closes and exits when stdin ends.
 */
import { createInterface } from 'node:readline';
import { FakeLeviathPeer } from '../fakes/FakeLeviathPeer.ts';
import { BURST_RUN, BURST_TOKEN, burstFrames } from './leviathBurstFrames.ts';

const peer = await FakeLeviathPeer.start({ token: BURST_TOKEN, runs: [BURST_RUN] });
process.stdout.write(`${JSON.stringify({ url: peer.url })}\n`);
let prepared: string[] = [];
for await (const line of createInterface({ input: process.stdin })) {
  const command = JSON.parse(line) as { prepare?: number; send?: true };
  if (command.prepare !== undefined) {
    prepared = burstFrames(command.prepare).map((frame) => JSON.stringify(frame));
    process.stdout.write('prepared\n');
  }
  if (command.send) {
    for (const text of prepared) peer.sendRaw(text);
    process.stdout.write('sent\n');
  }
}
await peer.close();
