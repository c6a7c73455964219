export const shortHash = (h: string | null | undefined) => (h ? h.slice(0, 10) : '—');

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['kB', 'MB', 'GB', 'TB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
}

export const formatCount = (n: number) => new Intl.NumberFormat().format(n);

export function formatDuration(from: string | null, to: string | null, now = Date.now()): string {
  if (!from) return '—';
  const ms = (to ? Date.parse(to) : now) - Date.parse(from);
  if (ms < 1000) return `${ms} ms`;
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  return m < 60 ? `${m} min ${s % 60} s` : `${Math.floor(m / 60)} h ${m % 60} min`;
}

export const formatTime = (iso: string | null | undefined) =>
  iso
    ? new Date(iso).toLocaleString(undefined, {
        month: 'short',
        day: 'numeric',
        hour: '2-digit',
        minute: '2-digit',
        second: '2-digit',
      })
    : '—';

export const terminal = (state: string) => ['succeeded', 'failed', 'canceled'].includes(state);

/** How a run started: api, retry, or the trigger that started it (schedule nightly…). */
export const formatTrigger = (r: { trigger: string; trigger_slug: string | null }) =>
  r.trigger_slug ? `${r.trigger} ${r.trigger_slug}` : r.trigger;
