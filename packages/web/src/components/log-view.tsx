import { useVirtualizer } from '@tanstack/react-virtual';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { scrollRegion } from '../lib/a11y';
import { fetchLogs, logStreamUrl, type RunPath } from '../lib/queries/runs';
import { useEventStream } from '../lib/sse';
import type { LogLine } from '../lib/types';
import { Input, Select } from './ui';

const LINE = 24; // px: a line number is a link, and 24 px is the least target size (WCAG 2.5.8)
const levelColor: Record<string, string> = {
  // The log pane is dark in both schemes, so its colours are the light-on-dark ones.
  debug: 'text-slate-400',
  info: 'text-sky-300',
  warn: 'text-amber-300',
  error: 'text-red-400',
};

// The server's log cursor (runs.repo logCursorAfter): the seq padded to 10 digits, base64url, then itself.
const cursorAt = (seq: number) => {
  const p = String(Math.max(0, seq)).padStart(10, '0');
  const value = btoa(p).replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_');
  return `${value}_${p}`;
};

/**
 * A run's log: the last page first (or the page of a linked line), older pages on demand, and a
 * live tail over SSE that appends only new lines. Only the visible rows are in the DOM.
 */
export function LogView(props: {
  run: RunPath;
  level?: string;
  q?: string;
  step?: string;
  onFilter: (patch: { level?: string; q?: string }) => void;
  live: boolean;
}) {
  const [lines, setLines] = useState<LogLine[]>([]);
  const [hasOlder, setHasOlder] = useState(false);
  const [ready, setReady] = useState(false);
  const target = useMemo(() => {
    const m = /^#L(\d+)$/.exec(window.location.hash);
    return m ? Number(m[1]) : null;
  }, []);
  const [selected, setSelected] = useState<number | null>(target);
  const follow = useRef(target === null);
  const lastTop = useRef(0);

  useEffect(() => {
    let live = true;
    void (async () => {
      if (target !== null) {
        const page = await fetchLogs(props.run, { order: 'asc', cursor: cursorAt(target - 50) });
        if (!live) return;
        setLines(page.logs);
        setHasOlder(target > 50);
      } else {
        const page = await fetchLogs(props.run, { order: 'desc' });
        if (!live) return;
        setLines(page.logs.slice().reverse());
        setHasOlder(page.has_more);
      }
      setReady(true);
    })();
    return () => {
      live = false;
    };
  }, [props.run, target]);

  const lastSeq = lines.at(-1)?.seq ?? 0;
  // A linked line opens where it is, so the tail starts only once the page has reached the end.
  const streamUrl =
    ready && props.live && (target === null || lines.length < 100) ? logStreamUrl(props.run, lastSeq) : null;
  const [streamFrom, setStreamFrom] = useState<string | null>(null);
  useEffect(() => {
    if (streamUrl && !streamFrom) setStreamFrom(streamUrl);
  }, [streamUrl, streamFrom]);
  useEventStream(streamFrom, {
    logs: (batch: LogLine[]) =>
      setLines((old) => (old.length && batch[0].seq <= old[old.length - 1].seq ? old : old.concat(batch))),
  });

  const loadOlder = useCallback(async () => {
    const first = lines[0]?.seq;
    if (first === undefined) return;
    const page = await fetchLogs(props.run, { order: 'desc', cursor: cursorAt(first) });
    setLines((old) => page.logs.slice().reverse().concat(old));
    setHasOlder(page.has_more);
  }, [lines, props.run]);

  const needle = props.q?.toLowerCase();
  const shown = useMemo(
    () =>
      lines.filter(
        (l) =>
          (!props.level || l.level === props.level) &&
          (!props.step || l.step_slug === props.step) &&
          (!needle || l.message.toLowerCase().includes(needle)),
      ),
    [lines, props.level, props.step, needle],
  );

  const scroller = useRef<HTMLDivElement>(null);
  const virtual = useVirtualizer({
    count: shown.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => LINE,
    overscan: 20,
  });
  useEffect(() => {
    if (follow.current && shown.length > 0) virtual.scrollToIndex(shown.length - 1, { align: 'end' });
  }, [shown.length, virtual]);
  useEffect(() => {
    if (target === null || !ready) return;
    const i = shown.findIndex((l) => l.seq === target);
    if (i >= 0) virtual.scrollToIndex(i, { align: 'center' });
  }, [ready, target, shown, virtual]);

  return (
    <div>
      <div className="mb-2 flex flex-wrap items-end gap-2">
        <div>
          <label htmlFor="log-level" className="block text-xs font-medium text-slate-600 dark:text-slate-400">
            Level
          </label>
          <Select
            id="log-level"
            value={props.level ?? ''}
            onChange={(e) => props.onFilter({ level: e.target.value || undefined })}
          >
            <option value="">All levels</option>
            <option>debug</option>
            <option>info</option>
            <option>warn</option>
            <option>error</option>
          </Select>
        </div>
        <div className="min-w-48 flex-1">
          <label
            htmlFor="log-search"
            className="block text-xs font-medium text-slate-600 dark:text-slate-400"
          >
            Search the loaded lines
          </label>
          <Input
            id="log-search"
            type="search"
            defaultValue={props.q ?? ''}
            onChange={(e) => props.onFilter({ q: e.target.value || undefined })}
          />
        </div>
        <a
          className="inline-flex items-center rounded-md border border-slate-300 px-3 py-1.5 text-sm hover:bg-slate-100 dark:border-slate-600 dark:hover:bg-slate-800"
          href={`/api${props.run}/log-download`}
          download
        >
          Download
        </a>
      </div>
      <section
        ref={scroller}
        data-testid="log-scroller"
        {...scrollRegion}
        aria-label="Log lines"
        onScroll={(e) => {
          // Following stops only when the reader scrolls up, and starts again at the end. Lines
          // that arrive between a scroll to the end and its scroll event (a slow or busy tab)
          // leave the view short of the end without anyone scrolling up.
          const el = e.currentTarget;
          if (el.scrollHeight - el.scrollTop - el.clientHeight < LINE * 2) follow.current = true;
          else if (el.scrollTop < lastTop.current) follow.current = false;
          lastTop.current = el.scrollTop;
        }}
        className="h-96 overflow-auto rounded-md border border-slate-200 bg-slate-950 font-mono text-xs text-slate-100 dark:border-slate-800"
      >
        {hasOlder && (
          <button
            type="button"
            className="w-full py-1 text-center text-sky-300 hover:underline"
            onClick={loadOlder}
          >
            Load earlier lines
          </button>
        )}
        <div style={{ height: virtual.getTotalSize(), position: 'relative' }}>
          {virtual.getVirtualItems().map((v) => {
            const l = shown[v.index];
            return (
              <div
                key={l.seq}
                id={`L${l.seq}`}
                data-line={l.seq}
                className={`absolute left-0 flex w-full gap-3 whitespace-pre px-2 ${selected === l.seq ? 'bg-amber-400/25' : ''}`}
                style={{ top: v.start, height: LINE, lineHeight: `${LINE}px` }}
              >
                <a
                  href={`#L${l.seq}`}
                  onClick={() => setSelected(l.seq)}
                  className="w-16 shrink-0 text-right text-slate-400 hover:text-white"
                  aria-label={`Link to line ${l.seq}`}
                >
                  {l.seq}
                </a>
                <span className={`w-12 shrink-0 ${levelColor[l.level]}`}>{l.level}</span>
                <span className="w-28 shrink-0 truncate text-slate-400">{l.step_slug ?? 'run'}</span>
                <span className="text-slate-100">{l.message}</span>
              </div>
            );
          })}
        </div>
      </section>
      <p className="mt-1 text-xs text-slate-600 dark:text-slate-400" data-testid="log-count">
        {shown.length} of {lines.length} loaded lines shown
      </p>
    </div>
  );
}
