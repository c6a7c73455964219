const rss = () => (process.memoryUsage().rss / 1e6).toFixed(0);
console.log('start', rss());
const mods = (process.env.MODS ?? '').split(',');
for (const m of mods) { await import(m); (globalThis as any).gc?.(); console.log(m, rss(), 'heap', (process.memoryUsage().heapUsed/1e6).toFixed(0)); }
