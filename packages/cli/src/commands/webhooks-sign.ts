import { createHmac, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import type { Command } from 'commander';
import { CliError, ExitCode } from '../exit';
import { printJson, printLines, readStdin } from '../io';

// For testing a sender: the three Standard Webhooks headers for a body and a secret. The secret
// comes from SLUICE_WEBHOOK_SECRET (never a flag, so it stays out of shell history).

export function signDelivery(secret: string, id: string, timestamp: number, body: Buffer) {
  const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64');
  const mac = createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest('base64');
  return { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': `v1,${mac}` };
}

export function webhooksSignCommand(webhooks: Command) {
  webhooks
    .command('sign')
    .description(
      'Print the webhook-id, webhook-timestamp and webhook-signature headers for a body (secret in SLUICE_WEBHOOK_SECRET)',
    )
    .argument('<body_file>', 'file holding the exact body bytes to send (- for standard input)')
    .option('--id <delivery_id>', 'delivery id (default: a random one)')
    .option('--timestamp <seconds>', 'Unix seconds (default: now)')
    .option('--json', 'print the headers as JSON')
    .action(async (file: string, opts: { id?: string; timestamp?: string; json?: boolean }) => {
      const secret = process.env.SLUICE_WEBHOOK_SECRET?.trim();
      if (!secret)
        throw new CliError(ExitCode.failed, 'set SLUICE_WEBHOOK_SECRET to the trigger signing secret');
      const body = file === '-' ? Buffer.from(await readStdin()) : fs.readFileSync(file);
      const id = opts.id ?? `msg_${randomUUID().replaceAll('-', '')}`;
      if (!/^[A-Za-z0-9._:-]{1,128}$/.test(id))
        throw new CliError(ExitCode.failed, '--id must match ^[A-Za-z0-9._:-]{1,128}$');
      const ts = opts.timestamp ? Number(opts.timestamp) : Math.floor(Date.now() / 1000);
      if (!Number.isInteger(ts) || ts <= 0)
        throw new CliError(ExitCode.failed, '--timestamp must be Unix seconds');
      const headers = signDelivery(secret, id, ts, body);
      if (opts.json) return printJson(headers);
      printLines(Object.entries(headers).map(([k, v]) => `${k}: ${v}`));
    });
}
