import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { interceptors, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  classifyAddress,
  EgressBlockedError,
  egressPolicy,
  guardedDispatcher,
  resolveAllowed,
} from './egress';

const closed = { allowPrivate: false };
const open = { allowPrivate: true };

// Hosts that must never be reached without allow_private_hosts (and some never at all).
const vectors = [
  '127.0.0.1',
  '127.1',
  '2130706433',
  '0177.0.0.1',
  '0x7f.0.0.1',
  '0x7f000001',
  '::1',
  '[::1]',
  '::ffff:127.0.0.1',
  '[::ffff:7f00:1]',
  '0.0.0.0',
  '0.1.2.3',
  '10.0.0.1',
  '172.16.0.1',
  '172.31.255.254',
  '192.168.1.1',
  '169.254.169.254',
  '169.254.1.1',
  'fd00::1',
  'fc00::1',
  'fe80::1',
  '100.64.0.1',
  '224.0.0.1',
  '255.255.255.255',
  '::',
  '::ffff:10.0.0.1',
  '64:ff9b::7f00:1',
  'localhost',
];

describe('egress guard: addresses', () => {
  it.each(vectors)('blocks %s without allow_private_hosts', async (host) => {
    await expect(resolveAllowed(host, closed)).rejects.toBeInstanceOf(EgressBlockedError);
  });

  it('has at least 20 vectors', () => expect(vectors.length).toBeGreaterThanOrEqual(20));

  it('lets private hosts through only by policy, and never metadata or reserved ones', async () => {
    expect((await resolveAllowed('127.0.0.1', open)).address).toBe('127.0.0.1');
    expect((await resolveAllowed('2130706433', open)).address).toBe('127.0.0.1');
    expect((await resolveAllowed('10.1.2.3', open)).address).toBe('10.1.2.3');
    for (const never of ['169.254.169.254', '0.0.0.0', '224.0.0.1', '::', '255.255.255.255']) {
      await expect(resolveAllowed(never, open)).rejects.toBeInstanceOf(EgressBlockedError);
    }
  });

  it('never reaches cloud metadata and credential endpoints or IPv4-compatible IPv6', async () => {
    const never = [
      '168.63.129.16',
      '169.254.170.2',
      '169.254.170.23',
      'fd00:ec2::23',
      '[fd00:ec2::23]',
      '::a9fe:a9fe',
      '::169.254.169.254',
      '::7f00:1',
      '::808:808',
    ];
    for (const host of never) {
      expect(classifyAddress(host), host).toBe('forbidden');
      await expect(resolveAllowed(host, open), host).rejects.toBeInstanceOf(EgressBlockedError);
      await expect(
        resolveAllowed(host, { allowPrivate: true, allowCidrs: ['0.0.0.0/0', '::/0'] }),
      ).rejects.toBeInstanceOf(EgressBlockedError);
    }
    // A name that resolves to one of them is blocked the same way.
    const lookup = async () => [{ address: '168.63.129.16', family: 4 }];
    await expect(resolveAllowed('wire.example', { ...open, lookup })).rejects.toBeInstanceOf(
      EgressBlockedError,
    );
  });

  it('passes public unicast addresses', () => {
    expect(classifyAddress('8.8.8.8')).toBe('public');
    expect(classifyAddress('2606:4700:4700::1111')).toBe('public');
    expect(classifyAddress('::ffff:8.8.8.8')).toBe('public');
  });

  it('hosted deployments ignore allow_private_hosts and the allowlist', () => {
    expect(egressPolicy('hosted', true, ['10.0.0.0/8'])).toEqual({ allowPrivate: false, allowCidrs: [] });
    expect(egressPolicy('self_hosted', true).allowPrivate).toBe(true);
    expect(egressPolicy('self_hosted', undefined).allowPrivate).toBe(false);
  });

  it('blocks a name when any of its answers is private', async () => {
    const lookup = async () => [
      { address: '93.184.216.34', family: 4 },
      { address: '10.0.0.7', family: 4 },
    ];
    await expect(resolveAllowed('mixed.example', { ...closed, lookup })).rejects.toBeInstanceOf(
      EgressBlockedError,
    );
  });

  it('honours the private CIDR allowlist', async () => {
    const policy = { allowPrivate: false, allowCidrs: ['127.0.0.2/32'] };
    expect((await resolveAllowed('127.0.0.2', policy)).address).toBe('127.0.0.2');
    await expect(resolveAllowed('127.0.0.3', policy)).rejects.toBeInstanceOf(EgressBlockedError);
  });
});

describe('egress guard: HTTP connections', () => {
  const servers: http.Server[] = [];
  let portA = 0;
  let portB = 0;

  async function listen(host: string, handler: http.RequestListener): Promise<number> {
    const s = http.createServer(handler);
    servers.push(s);
    await new Promise<void>((r) => s.listen(0, host, r));
    return (s.address() as AddressInfo).port;
  }

  beforeAll(async () => {
    // Two loopback hosts: .2 is allowlisted, .3 is not.
    portB = await listen('127.0.0.3', (_req, res) => res.end('inside'));
    portA = await listen('127.0.0.2', (req, res) => {
      if (req.url === '/redirect') {
        res.writeHead(302, { location: `http://127.0.0.3:${portB}/` });
        return res.end();
      }
      if (req.url === '/redirect-name') {
        res.writeHead(302, { location: `http://localhost:${portB}/` });
        return res.end();
      }
      res.end('allowed');
    });
  });
  afterAll(() => Promise.all(servers.map((s) => new Promise((r) => s.close(r)))));

  const policy = { allowPrivate: false, allowCidrs: ['127.0.0.2/32'] };

  async function get(url: string, p: typeof policy & { lookup?: any }, follow = false) {
    const base = guardedDispatcher(p);
    const dispatcher = follow ? base.compose(interceptors.redirect({ maxRedirections: 5 })) : base;
    try {
      const res = await request(url, { dispatcher });
      return { status: res.statusCode, body: await res.body.text() };
    } finally {
      await base.close();
    }
  }

  it('connects to an allowed host and refuses a blocked literal', async () => {
    expect((await get(`http://127.0.0.2:${portA}/`, policy)).body).toBe('allowed');
    await expect(get(`http://127.0.0.3:${portB}/`, policy)).rejects.toBeInstanceOf(EgressBlockedError);
    await expect(get(`http://2130706435:${portB}/`, policy)).rejects.toBeInstanceOf(EgressBlockedError);
  });

  it('checks every redirect hop', async () => {
    await expect(get(`http://127.0.0.2:${portA}/redirect`, policy, true)).rejects.toBeInstanceOf(
      EgressBlockedError,
    );
    await expect(get(`http://127.0.0.2:${portA}/redirect-name`, policy, true)).rejects.toBeInstanceOf(
      EgressBlockedError,
    );
  });

  it('connects to the address it checked when DNS changes its answer (rebinding)', async () => {
    let calls = 0;
    // First answer allowlisted, every later one inside: a rebinding attacker's DNS.
    const lookup = async () => {
      calls++;
      return [{ address: calls === 1 ? '127.0.0.2' : '127.0.0.3', family: 4 }];
    };
    const first = await get(`http://rebind.test:${portA}/`, { ...policy, lookup });
    expect(first.body).toBe('allowed');
    expect(calls).toBe(1);
    await expect(get(`http://rebind.test:${portA}/`, { ...policy, lookup })).rejects.toBeInstanceOf(
      EgressBlockedError,
    );
  });
});
