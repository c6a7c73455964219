// Proves the SMTP peer behaves like a real relay for nodemailer: capture, auth, and injected failures.
import nodemailer from 'nodemailer';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type SmtpPeer, startSmtpPeer } from './smtp';

describe('smtp peer', () => {
  let peer: SmtpPeer;

  beforeAll(async () => {
    peer = await startSmtpPeer({ user: 'mailer', password: 's3cret' });
  });
  afterEach(() => peer.clear());
  afterAll(() => peer.close());

  it('captures mail sent by nodemailer, decoding quoted-printable', async () => {
    const transport = nodemailer.createTransport(peer.url);
    // Long line + '=' + non-ASCII forces nodemailer into QP with soft breaks and =3D escapes.
    const text = `Run #42 failed: status=error ${'x'.repeat(120)}\nsecond line – ünïcode`;
    await transport.sendMail({
      from: '"Sluice" <sluice@example.test>',
      to: 'ops@example.test, "Doe, Jane" <jane@example.test>',
      bcc: 'audit@example.test',
      subject: 'Pipeline failed ✔',
      text,
    });

    const mail = await peer.waitFor((m) => m.subject.startsWith('Pipeline'));
    expect(mail.raw).toMatch(/quoted-printable/i);
    expect(mail.raw).toContain('=3D');
    expect(mail.from).toBe('sluice@example.test');
    expect(mail.to).toEqual(['ops@example.test', 'jane@example.test']);
    expect(mail.envelope.to).toContain('audit@example.test');
    expect(mail.subject).toBe('Pipeline failed ✔');
    expect(mail.text).toBe(text);
    expect(peer.messages).toHaveLength(1);
  });

  it('finds the text part of a multipart (text + html) message', async () => {
    const transport = nodemailer.createTransport(peer.url);
    await transport.sendMail({
      from: 'a@x.test',
      to: 'b@x.test',
      subject: 'multi',
      text: 'plain',
      html: '<b>x</b>',
    });
    expect((await peer.waitFor()).text).toBe('plain');
  });

  it('waitFor resolves for mail arriving later and times out otherwise', async () => {
    const pending = peer.waitFor((m) => m.subject === 'later');
    await nodemailer
      .createTransport(peer.url)
      .sendMail({ from: 'a@x.test', to: 'b@x.test', subject: 'later', text: 'hi' });
    expect((await pending).text).toBe('hi');
    await expect(peer.waitFor((m) => m.subject === 'never', 50)).rejects.toThrow(/No matching mail/);
  });

  it('rejects wrong credentials with 535', async () => {
    const transport = nodemailer.createTransport({
      host: '127.0.0.1',
      port: peer.port,
      secure: false,
      auth: { user: 'mailer', pass: 'wrong' },
    });
    await expect(
      transport.sendMail({ from: 'a@x.test', to: 'b@x.test', subject: 's', text: 't' }),
    ).rejects.toMatchObject({ responseCode: 535 });
    expect(peer.messages).toHaveLength(0);
  });

  it('supports AUTH LOGIN as well as PLAIN', async () => {
    const transport = nodemailer.createTransport({
      host: '127.0.0.1',
      port: peer.port,
      auth: { user: 'mailer', pass: 's3cret', method: 'LOGIN' },
    });
    await transport.sendMail({ from: 'a@x.test', to: 'b@x.test', subject: 'login', text: 't' });
    expect(peer.messages.map((m) => m.subject)).toEqual(['login']);
  });

  it('failNext answers the next n DATA commands with the given code, then recovers', async () => {
    const transport = nodemailer.createTransport(peer.url);
    const send = (subject: string) =>
      transport.sendMail({ from: 'a@x.test', to: 'b@x.test', subject, text: 't' });

    peer.failNext(2);
    await expect(send('one')).rejects.toMatchObject({ responseCode: 451 });
    await expect(send('two')).rejects.toMatchObject({ responseCode: 451 });
    await send('three');

    peer.failNext(1, 550);
    await expect(send('four')).rejects.toMatchObject({ responseCode: 550 });
    await send('five');

    expect(peer.messages.map((m) => m.subject)).toEqual(['three', 'five']);
  });
});
