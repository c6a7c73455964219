import fs from 'node:fs';
import net from 'node:net';

// A port for a server a test starts itself, or passes to a child process to listen on.
//
// The kernel's own pick (listen on port 0, read it, release it) comes from the ephemeral range,
// the same range every outgoing connection of every parallel test draws its local port from, so
// between the release and the child's listen another test's connection can take it (CI saw
// EADDRINUSE that way). Ports below the ephemeral range are never handed out implicitly: one that
// binds now stays free unless another test names the very same number, and the random start
// makes that unlikely; a taken one is skipped.

const FLOOR = 20_000;

function ephemeralLow(): number {
  try {
    const [low] = fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/);
    const n = Number(low);
    if (Number.isInteger(n) && n > FLOOR + 1000) return n;
  } catch {
    // not Linux: fall through to the IANA default
  }
  return 49_152;
}

const handedOut = new Set<number>();

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

/** A loopback port outside the ephemeral range that nothing listens on right now. */
export async function freePort(): Promise<number> {
  const high = ephemeralLow() - 1;
  const span = high - FLOOR;
  const start = FLOOR + Math.floor(Math.random() * span);
  for (let i = 0; i < 200; i++) {
    const port = FLOOR + ((start - FLOOR + i * 7919) % span);
    if (handedOut.has(port)) continue;
    if (await bindable(port)) {
      handedOut.add(port);
      return port;
    }
  }
  throw new Error(`no free loopback port between ${FLOOR} and ${high}`);
}
