import { parseConfig } from '../../packages/server/src/env';
import { decideTrigger, tick } from '../../packages/server/src/modules/triggers/trigger-tick';
import { claimDueTrigger } from '../../packages/server/src/modules/triggers/triggers.repo';
import { openRuntime } from '../../packages/server/src/runtime';

// A separate process ticking against the shared PostgreSQL store (the exactly-once suite):
//   ticks <from ISO> <steps>   tick once per minute of injected clock from <from>, then exit
//   hang <at ISO>              claim one due trigger and decide it, then never commit (the
//                              suite SIGKILLs the process between claiming and committing)

const [mode, at, steps] = process.argv.slice(2);
const rt = await openRuntime(parseConfig({ ...process.env, SLUICE_LOG_LEVEL: 'silent' }), {
  supervise: false,
});
if (mode === 'ticks') {
  let started = 0;
  for (let i = 0; i < Number(steps); i++) {
    const r = await tick(rt.deps, { clock: () => new Date(Date.parse(at) + i * 60_000) });
    started += r.started;
  }
  process.stdout.write(`done ${started}\n`);
  await rt.close();
} else if (mode === 'hang') {
  await rt.deps.db.transaction(async (tx) => {
    const now = new Date(at);
    const t = await claimDueTrigger(tx, now, []);
    if (!t) throw new Error('nothing due');
    const r = await decideTrigger(tx, rt.deps, t, now);
    process.stdout.write(`decided ${t.slug} ${r.started}\n`);
    await new Promise(() => {});
  });
}
