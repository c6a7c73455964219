import { useQuery } from '@tanstack/react-query';
import { useNavigate } from '@tanstack/react-router';
import { useEffect, useId, useMemo, useRef, useState } from 'react';
import { useProjects } from '../lib/hooks';
import { mainPlaces, settingsSections } from '../lib/places';
import { dataSourcePickerQuery } from '../lib/queries/data-sources';
import { everyProjectPipelinesQuery } from '../lib/queries/pipelines';

// Ctrl/Cmd-K: jump to any screen, pipeline or data source by name, from the keyboard.

type Item = { id: string; label: string; hint: string; go: () => void };

const SCREENS: [string, string, string][] = [
  ...mainPlaces.map((p): [string, string, string] => [p.to.split('/').pop()!, p.label, p.to]),
  ['new-pipeline', 'New pipeline', '/o/$org/pipelines/new'],
  ['new-data-source', 'New data source', '/o/$org/data-sources/new'],
  ...settingsSections.map(([section, label]): [string, string, string] => [
    section,
    `Settings: ${label}`,
    '/o/$org/settings/$section',
  ]),
];

/** Pipelines of every project and the data sources, read through the list endpoints while open. */
function useTargets(org: string, open: boolean) {
  const projects = useProjects(org);
  const slugs = (projects.data?.projects ?? []).map((p) => p.slug);
  const pipelines = useQuery({
    ...everyProjectPipelinesQuery(org, slugs),
    enabled: open && projects.isSuccess,
    staleTime: 30_000,
  });
  const sources = useQuery({ ...dataSourcePickerQuery(org), enabled: open, staleTime: 30_000 });
  return { pipelines: pipelines.data ?? [], sources: sources.data?.data_sources ?? [] };
}

/** Listens for Ctrl/Cmd-K; the dialog (and what it reads) exists only while open. */
export function CommandPalette({ org }: { org: string }) {
  const [open, setOpen] = useState(false);
  const returnTo = useRef<Element | null>(null);
  const isOpen = useRef(false);
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === 'k') {
        e.preventDefault();
        // A second Ctrl-K while open keeps the element to return to.
        if (!isOpen.current) returnTo.current = document.activeElement;
        isOpen.current = true;
        setOpen(true);
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);
  if (!open) return null;
  return (
    <PaletteDialog
      org={org}
      onClose={(refocus) => {
        isOpen.current = false;
        setOpen(false);
        if (refocus && returnTo.current instanceof HTMLElement) returnTo.current.focus();
      }}
    />
  );
}

function PaletteDialog({ org, onClose }: { org: string; onClose: (refocus: boolean) => void }) {
  const [q, setQ] = useState('');
  const [active, setActive] = useState(0);
  const navigate = useNavigate();
  const input = useRef<HTMLInputElement>(null);
  const id = useId();
  const targets = useTargets(org, true);
  useEffect(() => {
    input.current?.focus();
  }, []);
  const close = () => onClose(true);
  const items = useMemo(() => {
    const go =
      (to: string, params: Record<string, string>, search: Record<string, string> = {}) =>
      () =>
        void navigate({ to, params: { org, ...params }, search } as never);
    const all: Item[] = [
      ...SCREENS.map(([key, label, to]) => ({
        id: `screen-${key}`,
        label,
        hint: 'screen',
        go: go(to, to.endsWith('$section') ? { section: key } : {}),
      })),
      ...targets.pipelines.map((p) => ({
        id: `pipeline-${p.project_slug}-${p.slug}`,
        label: p.name,
        hint: `pipeline in ${p.project_slug}`,
        go: go('/o/$org/pipelines/$project/$pipeline', { project: p.project_slug, pipeline: p.slug }),
      })),
      ...targets.sources.map((d) => ({
        id: `data-source-${d.slug}`,
        label: d.name,
        hint: `data source (${d.type})`,
        go: go('/o/$org/data-sources/$ds', { ds: d.slug }),
      })),
    ];
    const words = q.toLowerCase().split(/\s+/).filter(Boolean);
    return all
      .filter((i) => words.every((w) => `${i.label} ${i.hint} ${i.id}`.toLowerCase().includes(w)))
      .slice(0, 30);
  }, [q, targets.pipelines, targets.sources, navigate, org]);

  const pick = (i: Item | undefined) => {
    if (!i) return;
    onClose(false);
    i.go();
  };
  const current = items[Math.min(active, items.length - 1)];
  return (
    // biome-ignore lint/a11y/noStaticElementInteractions: a click outside closes, as Escape does from the keyboard.
    <div
      className="fixed inset-0 z-50 flex items-start justify-center bg-slate-900/40 pt-24"
      onMouseDown={close}
    >
      <div
        role="dialog"
        aria-modal="true"
        aria-labelledby={`${id}-title`}
        className="w-full max-w-xl rounded-lg border border-slate-200 bg-white shadow-xl dark:border-slate-700 dark:bg-slate-900"
        onMouseDown={(e) => e.stopPropagation()}
      >
        <h2 id={`${id}-title`} className="sr-only">
          Jump to a screen, pipeline or data source
        </h2>
        <input
          ref={input}
          role="combobox"
          aria-expanded="true"
          aria-controls={`${id}-list`}
          aria-activedescendant={current ? `${id}-${current.id}` : undefined}
          aria-label="Jump to"
          placeholder="Jump to a screen, pipeline or data source…"
          className="block w-full rounded-t-lg border-b border-slate-200 bg-transparent px-4 py-3 text-sm dark:border-slate-700"
          value={q}
          onChange={(e) => {
            setQ(e.target.value);
            setActive(0);
          }}
          onKeyDown={(e) => {
            if (e.key === 'ArrowDown') {
              e.preventDefault();
              setActive((a) => Math.min(a + 1, items.length - 1));
            } else if (e.key === 'ArrowUp') {
              e.preventDefault();
              setActive((a) => Math.max(a - 1, 0));
            } else if (e.key === 'Enter') {
              e.preventDefault();
              pick(current);
            } else if (e.key === 'Escape' || e.key === 'Tab') {
              e.preventDefault();
              close();
            }
          }}
        />
        <div id={`${id}-list`} role="listbox" aria-label="Matches" className="max-h-80 overflow-y-auto py-1">
          {items.length === 0 && (
            <p className="px-4 py-2 text-sm text-slate-600 dark:text-slate-400">No match.</p>
          )}
          {items.map((i) => (
            <div
              key={i.id}
              tabIndex={-1}
              id={`${id}-${i.id}`}
              role="option"
              aria-selected={i === current}
              className={`flex cursor-pointer justify-between px-4 py-1.5 text-sm ${i === current ? 'bg-blue-100 text-blue-950 dark:bg-blue-900 dark:text-white' : ''}`}
              onMouseDown={() => pick(i)}
            >
              <span>{i.label}</span>
              <span className="text-xs text-slate-600 dark:text-slate-300">{i.hint}</span>
            </div>
          ))}
        </div>
      </div>
    </div>
  );
}
