// git over HTTPS for git-connector tests: the real `git http-backend` (smart HTTP, fetch and
// push) behind a small Node HTTPS server on loopback with a self-signed certificate and Basic
// auth. `caFile` is the certificate git must trust (set GIT_SSL_CAINFO to it: this
// environment presets GIT_SSL_CAINFO, which would win over http.sslCAInfo). Every request is
// recorded with its Authorization header so tests can check what was sent. The certificate
// also names git.sluice-test.invalid, for tests that resolve that name themselves.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createBareRepo } from './git-repos';

export type GitHttpsPeer = {
  /** https://127.0.0.1:PORT/ — repositories are `${url}<name>.git`. */
  url: string;
  port: number;
  root: string;
  caFile: string;
  username: string;
  token: string;
  requests: { method: string; url: string; authorization: string | undefined }[];
  createRepo(name: string): string;
  /** Answers every request for `name` with a redirect to `location`. */
  redirect(name: string, location: string): void;
  close(): Promise<void>;
};

export async function startGitHttpsPeer(
  opts: { username?: string; token?: string } = {},
): Promise<GitHttpsPeer> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'git-https-peer-'));
  const keyFile = path.join(root, 'key.pem');
  const caFile = path.join(root, 'cert.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      keyFile,
      '-out',
      caFile,
      '-days',
      '2',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:git.sluice-test.invalid',
    ],
    { stdio: 'ignore' },
  );
  const repos = path.join(root, 'repos');
  fs.mkdirSync(repos);
  const username = opts.username ?? 'sluice';
  const token = opts.token ?? 'peer-token';
  const expected = `Basic ${Buffer.from(`${username}:${token}`).toString('base64')}`;
  const requests: GitHttpsPeer['requests'] = [];
  const redirects = new Map<string, string>();

  const server = https.createServer(
    { key: fs.readFileSync(keyFile), cert: fs.readFileSync(caFile) },
    (req, res) => {
      const url = new URL(req.url ?? '/', 'https://127.0.0.1');
      requests.push({
        method: req.method ?? '',
        url: req.url ?? '',
        authorization: req.headers.authorization,
      });
      const repoName = url.pathname.split('/')[1]?.replace(/\.git$/, '') ?? '';
      const target = redirects.get(repoName);
      if (target) {
        res.writeHead(302, { location: target + url.pathname.split('/').slice(2).join('/') + url.search });
        res.end();
        return;
      }
      if (req.headers.authorization !== expected) {
        res.writeHead(401, { 'www-authenticate': 'Basic realm="git"', 'content-type': 'text/plain' });
        res.end('authentication required\n');
        return;
      }
      const cgi = spawn('git', ['http-backend'], {
        env: {
          PATH: process.env.PATH,
          GIT_CONFIG_NOSYSTEM: '1',
          GIT_PROJECT_ROOT: repos,
          GIT_HTTP_EXPORT_ALL: '1',
          PATH_INFO: decodeURIComponent(url.pathname),
          QUERY_STRING: url.search.replace(/^\?/, ''),
          REQUEST_METHOD: req.method ?? 'GET',
          CONTENT_TYPE: req.headers['content-type'] ?? '',
          ...(req.headers['content-length'] ? { CONTENT_LENGTH: req.headers['content-length'] } : {}),
          ...(req.headers['content-encoding']
            ? { HTTP_CONTENT_ENCODING: req.headers['content-encoding'] }
            : {}),
          ...(req.headers['git-protocol'] ? { GIT_PROTOCOL: String(req.headers['git-protocol']) } : {}),
          REMOTE_USER: username,
          REMOTE_ADDR: '127.0.0.1',
        },
        stdio: ['pipe', 'pipe', 'ignore'],
      });
      req.pipe(cgi.stdin);
      cgi.stdin.on('error', () => {});
      // CGI output: headers up to a blank line, then the body.
      let head = Buffer.alloc(0);
      let started = false;
      cgi.stdout.on('data', (chunk: Buffer) => {
        if (started) {
          res.write(chunk);
          return;
        }
        head = Buffer.concat([head, chunk]);
        const end = head.indexOf('\r\n\r\n');
        if (end < 0) return;
        started = true;
        let status = 200;
        for (const line of head.subarray(0, end).toString('latin1').split('\r\n')) {
          const i = line.indexOf(':');
          const name = line.slice(0, i).trim();
          const value = line.slice(i + 1).trim();
          if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10);
          else res.setHeader(name, value);
        }
        res.writeHead(status);
        res.write(head.subarray(end + 4));
      });
      cgi.stdout.on('end', () => res.end());
      cgi.on('error', () => res.destroy());
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}/`,
    port,
    root: repos,
    caFile,
    username,
    token,
    requests,
    createRepo: (name) => createBareRepo(repos, name),
    redirect: (name, location) => void redirects.set(name, location),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => {
          fs.rmSync(root, { recursive: true, force: true });
          resolve();
        });
      }),
  };
}
