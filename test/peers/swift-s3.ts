// OpenStack Swift with its s3api middleware: a production S3 implementation, on loopback.
// One proxy, one account, one container and one object server plus memcached, each on a free
// port, one-replica rings in a temp dir. Installed from Debian when missing (PEERS.md).
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { aptInstall } from '../support/apt';
import { freePort } from '../support/free-port';

const run = promisify(execFile);

export type SwiftS3Peer = {
  /** `http://127.0.0.1:PORT`: the S3 endpoint (path-style). */
  endpoint: string;
  port: number;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** Creates a bucket (no-op when it exists). */
  createBucket(name: string): Promise<void>;
  stop(): Promise<void>;
};

const PACKAGES = ['swift', 'swift-proxy', 'swift-account', 'swift-container', 'swift-object', 'memcached'];
const BINARIES = [
  '/usr/bin/swift-ring-builder',
  '/usr/bin/swift-proxy-server',
  '/usr/bin/swift-account-server',
  '/usr/bin/swift-container-server',
  '/usr/bin/swift-object-server',
  '/usr/bin/memcached',
];

const common = (dir: string, port: number) => `[DEFAULT]
bind_ip = 127.0.0.1
bind_port = ${port}
workers = 0
user = ${userInfo().username}
swift_dir = ${dir}
devices = ${dir}/srv
mount_check = false
log_name = sluice-test
log_level = WARNING
`;

function serverConf(dir: string, port: number, kind: 'account' | 'container' | 'object'): string {
  return `${common(dir, port)}
[pipeline:main]
pipeline = ${kind}-server

[app:${kind}-server]
use = egg:swift#${kind}
${kind === 'object' ? '' : 'allow_versions = false\n'}
[${kind}-replicator]
[${kind}-auditor]
${kind === 'object' ? '[object-updater]\n' : kind === 'container' ? '[container-updater]\n[container-sync]\n' : '[account-reaper]\n'}`;
}

function proxyConf(dir: string, port: number, memcachePort: number, key: string, secret: string): string {
  const [account, user] = key.split(':');
  return `${common(dir, port)}
[pipeline:main]
pipeline = catch_errors gatekeeper healthcheck proxy-logging cache listing_formats s3api tempauth copy slo dlo proxy-logging proxy-server

[app:proxy-server]
use = egg:swift#proxy
account_autocreate = true
node_timeout = 30
conn_timeout = 2

[filter:tempauth]
use = egg:swift#tempauth
user_${account}_${user} = ${secret} .admin

[filter:s3api]
use = egg:swift#s3api
location = us-east-1
dns_compliant_bucket_names = true
allow_multipart_uploads = true
max_upload_part_num = 10000

[filter:catch_errors]
use = egg:swift#catch_errors
[filter:gatekeeper]
use = egg:swift#gatekeeper
[filter:healthcheck]
use = egg:swift#healthcheck
[filter:proxy-logging]
use = egg:swift#proxy_logging
[filter:cache]
use = egg:swift#memcache
memcache_servers = 127.0.0.1:${memcachePort}
[filter:listing_formats]
use = egg:swift#listing_formats
[filter:copy]
use = egg:swift#copy
[filter:slo]
use = egg:swift#slo
[filter:dlo]
use = egg:swift#dlo
`;
}

const SWIFT_CONF = `[swift-hash]
swift_hash_path_suffix = sluice-test-suffix
swift_hash_path_prefix = sluice-test-prefix

[storage-policy:0]
name = Policy-0
default = yes
`;

const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = connect({ host: '127.0.0.1', port }, () => {
      s.destroy();
      resolve(true);
    });
    s.on('error', () => resolve(false));
  });

/** The proxy answers its health check and every backend server accepts connections. */
async function waitHealthy(
  url: string,
  backends: number[],
  procs: ChildProcess[],
  log: () => string,
): Promise<void> {
  const deadline = Date.now() + 90_000;
  for (;;) {
    const dead = procs.find((p) => p.exitCode !== null);
    if (dead) throw new Error(`a Swift process exited (${dead.spawnfile}): ${log()}`);
    try {
      const res = await fetch(`${url}/healthcheck`);
      if (res.ok && (await Promise.all(backends.map(listening))).every(Boolean)) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`Swift did not become healthy: ${log()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Starts the whole Swift cluster; ~3-5 s once installed. */
export async function startSwiftS3(opts: { secretAccessKey?: string } = {}): Promise<SwiftS3Peer> {
  await aptInstall(PACKAGES, BINARIES);
  const dir = await mkdtemp(join(tmpdir(), 'sluice-swift-'));
  await mkdir(join(dir, 'srv', 'd1'), { recursive: true });
  await writeFile(join(dir, 'swift.conf'), SWIFT_CONF);
  // swift.conf is read from /etc/swift (its path is fixed in Swift); the Debian default says
  // "changeme", which Swift refuses. Our values only matter for this throwaway cluster.
  await mkdir('/etc/swift', { recursive: true });
  const etc = '/etc/swift/swift.conf';
  const current = existsSync(etc) ? await readFile(etc, 'utf8') : '';
  if (!current.includes('sluice-test-suffix')) {
    // Written whole and renamed: another suite may be starting its cluster at the same time.
    const temp = `${etc}.${process.pid}.tmp`;
    await writeFile(temp, SWIFT_CONF);
    await rename(temp, etc);
  }

  const [proxy, account, container, object, memcache] = await Promise.all([
    freePort(),
    freePort(),
    freePort(),
    freePort(),
    freePort(),
  ]);
  const rings: [string, number][] = [
    ['account', account],
    ['container', container],
    ['object', object],
  ];
  // All three rings in one Python process: each interpreter start costs seconds on a busy host.
  const script = [
    'import sys',
    'from swift.common.ring import RingBuilder',
    'd = sys.argv[1]',
    'for kind, port in zip(sys.argv[2::2], sys.argv[3::2]):',
    '    b = RingBuilder(10, 1, 1)',
    "    b.add_dev({'id': 0, 'region': 1, 'zone': 1, 'ip': '127.0.0.1', 'port': int(port), 'device': 'd1', 'weight': 100, 'meta': ''})",
    '    b.rebalance()',
    "    b.get_ring().save(f'{d}/{kind}.ring.gz')",
  ].join('\n');
  await run('/usr/bin/python3', ['-c', script, dir, ...rings.flatMap(([k, p]) => [k, String(p)])]);

  const accessKeyId = 'sluice:tester';
  const secretAccessKey = opts.secretAccessKey ?? 'swift-peer-secret-5c1e';
  for (const [kind, port] of rings)
    await writeFile(join(dir, `${kind}-server.conf`), serverConf(dir, port, kind as any));
  await writeFile(
    join(dir, 'proxy-server.conf'),
    proxyConf(dir, proxy, memcache, accessKeyId, secretAccessKey),
  );

  let output = '';
  const procs: ChildProcess[] = [];
  const start = (cmd: string, args: string[]) => {
    const p = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    p.stdout?.on('data', (d) => {
      output = (output + d).slice(-8000);
    });
    p.stderr?.on('data', (d) => {
      output = (output + d).slice(-8000);
    });
    procs.push(p);
    return p;
  };
  const me = userInfo().username;
  start('memcached', ['-u', me, '-l', '127.0.0.1', '-p', String(memcache), '-U', '0', '-m', '32']);
  for (const [kind] of rings) start(`swift-${kind}-server`, [join(dir, `${kind}-server.conf`)]);
  start('swift-proxy-server', [join(dir, 'proxy-server.conf')]);

  const stop = async () => {
    for (const p of procs) if (p.exitCode === null) p.kill('SIGTERM');
    await Promise.all(
      procs.map(
        (p) =>
          new Promise<void>((resolve) => {
            if (p.exitCode !== null || p.signalCode !== null) return resolve();
            const t = setTimeout(() => {
              p.kill('SIGKILL');
              resolve();
            }, 5000);
            p.once('exit', () => {
              clearTimeout(t);
              resolve();
            });
          }),
      ),
    );
    await rm(dir, { recursive: true, force: true });
  };
  process.once('exit', () => {
    for (const p of procs) if (p.exitCode === null) p.kill('SIGKILL');
  });

  const endpoint = `http://127.0.0.1:${proxy}`;
  try {
    await waitHealthy(endpoint, [account, container, object, memcache], procs, () => output);
  } catch (err) {
    await stop();
    throw err;
  }
  const peer: SwiftS3Peer = {
    endpoint,
    port: proxy,
    region: 'us-east-1',
    accessKeyId,
    secretAccessKey,
    async createBucket(name) {
      const { S3Client, CreateBucketCommand } = await import('@aws-sdk/client-s3');
      const client = new S3Client({
        endpoint,
        region: 'us-east-1',
        forcePathStyle: true,
        credentials: { accessKeyId, secretAccessKey },
        requestChecksumCalculation: 'WHEN_REQUIRED',
        responseChecksumValidation: 'WHEN_REQUIRED',
      });
      try {
        // Swift answers 503 until its backends have settled after start; retry for a while.
        for (let attempt = 0; ; attempt++) {
          try {
            await client.send(new CreateBucketCommand({ Bucket: name }));
            return;
          } catch (err: any) {
            if (err?.name === 'BucketAlreadyOwnedByYou' || err?.name === 'BucketAlreadyExists') return;
            if (err?.$metadata?.httpStatusCode !== 503 || attempt >= 60) throw err;
            await new Promise((r) => setTimeout(r, 500));
          }
        }
      } finally {
        client.destroy();
      }
    },
    stop,
  };
  return peer;
}
