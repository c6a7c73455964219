import fs from 'node:fs';
import {
  type ChainLink,
  type PublicKeyRecord,
  verifyChain,
  verifyEnvelope,
} from '@sluice/server/modules/proof/dsse.js';
import type { Command } from 'commander';
import { CliError, ExitCode } from '../exit';
import { printJson, printLines } from '../io';

type VerifyOptions = { keys: string; json?: boolean };

function readJson(file: string): any {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw new CliError(ExitCode.failed, `cannot read ${file} as JSON: ${(err as Error).message}`);
  }
}

/** A receipt as the API answers it, or a bare DSSE envelope. */
const envelopeOf = (doc: any) => (doc?.envelope ? doc.envelope : doc);

export function proofVerifyCommand(proof: Command) {
  proof
    .command('verify')
    .description(
      'Verify receipts offline: signatures against trusted public keys, and the hash chain of several',
    )
    .argument('<files...>', 'receipt JSON files (as GET …/proof-receipts/{slug} answers) or DSSE envelopes')
    .requiredOption('--keys <file>', 'trusted public keys: the JSON of GET /proof-keys, saved beforehand')
    .option('--json', 'print machine-readable JSON')
    .action((files: string[], opts: VerifyOptions) => {
      const doc = readJson(opts.keys);
      const keys: PublicKeyRecord[] = Array.isArray(doc) ? doc : (doc?.keys ?? []);
      const results = files.map((file) => {
        const receipt = readJson(file);
        const v = verifyEnvelope(envelopeOf(receipt), keys);
        return { file, receipt, v };
      });
      const bad = results.filter((r) => !r.v.ok);
      const links = results
        .map((r) => r.receipt)
        .filter((r) => r?.envelope && typeof r.sequence === 'number');
      const chain = links.length > 1 ? verifyChain(links as ChainLink[]) : null;
      const summary = results.map((r) =>
        r.v.ok
          ? {
              file: r.file,
              ok: true,
              verdict: r.v.statement.predicate.verdict,
              subject: r.v.statement.subject[0],
              keyid: r.v.keyid,
            }
          : { file: r.file, ok: false, reason: r.v.reason },
      );
      if (opts.json) printJson({ receipts: summary, chain });
      else
        printLines([
          ...summary.map((s: any) =>
            s.ok
              ? `${s.file}: verified, ${s.verdict}, ${s.subject.name}@${s.subject.digest.gitCommit}`
              : `${s.file}: ${s.reason}`,
          ),
          ...(chain ? [chain.ok ? 'chain: intact' : `chain: ${chain.reason}`] : []),
        ]);
      const failures = [
        ...bad.map((r) => `${r.file}: ${(r.v as { reason: string }).reason}`),
        ...(chain && !chain.ok ? [chain.reason] : []),
      ];
      if (failures.length > 0) throw new CliError(ExitCode.failed, failures.join('; '));
    });
}
