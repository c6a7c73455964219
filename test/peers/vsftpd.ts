import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { aptInstallSync } from '../support/apt';
import { freePort } from '../support/free-port';

// A real vsftpd (Debian package) on a random loopback port, logging in a real system user
// through PAM, for the FTP connector suites. `tls: true` starts it with explicit FTPS only
// (AUTH TLS, a self-signed certificate made here with openssl, logins and data must be
// protected), so a suite can prove the connector upgraded the session. Installed on first use;
// needs root (vsftpd switches to the logged-in user).

export const FTP_USER = 'sluiceftp';
/** Recognisable on purpose: the canary tests look for it in every response and record. */
export const FTP_PASSWORD = 'Canary-FtpPw-9f3kQ2x7';
const HOME = '/var/lib/sluiceftp';

export type VsftpdPeer = {
  host: string;
  port: number;
  /** The user's FTP root: files the tests put here are what the connector sees. */
  root: string;
  /** The server certificate (PEM) when started with TLS. */
  certificate: string | null;
  /** Puts a file below root, owned by the FTP user. */
  put(relative: string, content: string | Buffer): string;
  close(): Promise<void>;
};

function ensureInstalled(): void {
  aptInstallSync(['vsftpd'], ['/usr/sbin/vsftpd']);
}

const pause = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/** Runs `work` until it succeeds: suites starting together contend for /etc/passwd's lock. */
function retried<T>(work: () => T, what: string): T {
  for (let attempt = 1; ; attempt++) {
    try {
      return work();
    } catch (err) {
      if (attempt >= 40) throw new Error(`${what} failed: ${(err as Error).message}`);
      pause(250);
    }
  }
}

function ensureUser(): { uid: number; gid: number } {
  const ids = retried(() => {
    try {
      const line = execFileSync('getent', ['passwd', FTP_USER], { encoding: 'utf8' }).trim();
      const f = line.split(':');
      return { uid: Number(f[2]), gid: Number(f[3]) };
    } catch {
      // pam_shells wants a shell listed in /etc/shells.
      execFileSync('useradd', ['--home-dir', HOME, '--shell', '/bin/sh', FTP_USER], { stdio: 'ignore' });
      throw new Error('created; look it up again');
    }
  }, `creating system user ${FTP_USER}`);
  // vsftpd enters the home directory before local_root.
  fs.mkdirSync(HOME, { recursive: true });
  fs.chownSync(HOME, ids.uid, ids.gid);
  retried(
    () =>
      execFileSync('chpasswd', [], {
        input: `${FTP_USER}:${FTP_PASSWORD}\n`,
        stdio: ['pipe', 'ignore', 'ignore'],
      }),
    `setting the password of ${FTP_USER}`,
  );
  return ids;
}

/** Waits for the 220 greeting. */
async function greeted(port: number, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1');
      s.setTimeout(1000, () => {
        s.destroy();
        resolve(false);
      });
      s.once('data', (d) => {
        s.end('QUIT\r\n');
        resolve(d.toString().startsWith('220'));
      });
      s.once('error', () => resolve(false));
    });
    if (ok) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

export async function startVsftpd(opts: { tls?: boolean } = {}): Promise<VsftpdPeer> {
  if (process.getuid?.() !== 0) throw new Error('the vsftpd peer needs root (it logs in a system user)');
  ensureInstalled();
  const { uid, gid } = ensureUser();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-vsftpd-'));
  fs.chmodSync(dir, 0o755);
  const root = path.join(dir, 'root');
  fs.mkdirSync(root);
  fs.chownSync(root, uid, gid);
  const empty = path.join(dir, 'empty');
  fs.mkdirSync(empty, { mode: 0o755 });

  const port = await freePort();
  const pasvMin = 40_000 + Math.floor(Math.random() * 20_000);
  const lines = [
    'listen=YES',
    'listen_ipv6=NO',
    'listen_address=127.0.0.1',
    `listen_port=${port}`,
    'background=NO',
    'anonymous_enable=NO',
    'local_enable=YES',
    'write_enable=YES',
    'local_umask=022',
    `local_root=${root}`,
    'pam_service_name=vsftpd',
    'seccomp_sandbox=NO',
    `secure_chroot_dir=${empty}`,
    'pasv_enable=YES',
    'pasv_address=127.0.0.1',
    `pasv_min_port=${pasvMin}`,
    `pasv_max_port=${pasvMin + 200}`,
    'xferlog_enable=NO',
    'max_per_ip=50',
    'utf8_filesystem=YES',
  ];
  let certificate: string | null = null;
  if (opts.tls) {
    const cert = path.join(dir, 'cert.pem');
    const key = path.join(dir, 'key.pem');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '2',
        '-keyout',
        key,
        '-out',
        cert,
        '-subj',
        '/CN=localhost',
        '-addext',
        'subjectAltName=IP:127.0.0.1,DNS:localhost',
      ],
      { stdio: 'ignore' },
    );
    certificate = fs.readFileSync(cert, 'utf8');
    lines.push(
      'ssl_enable=YES',
      `rsa_cert_file=${cert}`,
      `rsa_private_key_file=${key}`,
      'force_local_logins_ssl=YES',
      'force_local_data_ssl=YES',
      'allow_anon_ssl=NO',
    );
  }
  const conf = path.join(dir, 'vsftpd.conf');
  fs.writeFileSync(conf, `${lines.join('\n')}\n`);

  let output = '';
  // vsftpd reports fatal configuration errors on fd 0.
  const child: ChildProcess = spawn('sh', ['-c', `exec /usr/sbin/vsftpd ${conf} 0>&1`], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (d) => {
    output += d.toString();
  });
  child.stderr?.on('data', (d) => {
    output += d.toString();
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  if (!(await greeted(port, 10_000))) {
    child.kill('SIGKILL');
    throw new Error(`vsftpd did not start: ${output.slice(0, 500)}`);
  }
  return {
    host: '127.0.0.1',
    port,
    root,
    certificate,
    put(relative, content) {
      const file = path.join(root, relative);
      fs.mkdirSync(path.dirname(file), { recursive: true });
      for (let d = path.dirname(file); d.startsWith(root) && d !== root; d = path.dirname(d))
        fs.chownSync(d, uid, gid);
      fs.writeFileSync(file, content);
      fs.chownSync(file, uid, gid);
      return file;
    },
    async close() {
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 2000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
