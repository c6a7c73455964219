import { json } from '@codemirror/lang-json';
import { sql } from '@codemirror/lang-sql';
import { MergeView } from '@codemirror/merge';
import { Compartment, EditorState, type Extension } from '@codemirror/state';
import { oneDark } from '@codemirror/theme-one-dark';
import { basicSetup, EditorView } from 'codemirror';
import { useEffect, useRef } from 'react';

const scheme = () => window.matchMedia('(prefers-color-scheme: dark)');
const themeFor = (): Extension => (scheme().matches ? oneDark : []);

/** Keeps an editor's theme on the OS colour scheme, also when it changes while the page is open. */
function followScheme(views: () => EditorView[], compartment: Compartment) {
  const media = scheme();
  const onChange = () => {
    for (const v of views()) v.dispatch({ effects: compartment.reconfigure(themeFor()) });
  };
  media.addEventListener('change', onChange);
  return () => media.removeEventListener('change', onChange);
}
const lang = (l: 'json' | 'sql') => (l === 'json' ? json() : sql());

/** CodeMirror 6 (no Monaco): the text of specs and queries, labelled for screen readers. */
export function CodeEditor(props: {
  value: string;
  onChange?: (v: string) => void;
  language: 'json' | 'sql';
  label: string;
  readOnly?: boolean;
  minHeight?: string;
}) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const onChange = useRef(props.onChange);
  onChange.current = props.onChange;
  // biome-ignore lint/correctness/useExhaustiveDependencies: the editor is created once; value changes flow below.
  useEffect(() => {
    const theme = new Compartment();
    view.current = new EditorView({
      parent: host.current!,
      state: EditorState.create({
        doc: props.value,
        extensions: [
          basicSetup,
          lang(props.language),
          theme.of(themeFor()),
          EditorView.contentAttributes.of({ 'aria-label': props.label }),
          EditorState.readOnly.of(Boolean(props.readOnly)),
          EditorView.theme({
            '&': { minHeight: props.minHeight ?? '12rem', fontSize: '13px' },
            '.cm-scroller': { minHeight: props.minHeight ?? '12rem' },
          }),
          EditorView.updateListener.of((u) => {
            if (u.docChanged) onChange.current?.(u.state.doc.toString());
          }),
        ],
      }),
    });
    const stop = followScheme(() => (view.current ? [view.current] : []), theme);
    return () => {
      stop();
      view.current?.destroy();
    };
  }, []);
  useEffect(() => {
    const v = view.current;
    if (v && v.state.doc.toString() !== props.value)
      v.dispatch({ changes: { from: 0, to: v.state.doc.length, insert: props.value } });
  }, [props.value]);
  return (
    <div ref={host} className="overflow-hidden rounded-md border border-slate-300 dark:border-slate-700" />
  );
}

/** Two versions side by side, changed lines marked. */
export function DiffView(props: { a: string; b: string; labelA: string; labelB: string }) {
  const host = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const theme = new Compartment();
    const ext = (label: string) => [
      basicSetup,
      json(),
      theme.of(themeFor()),
      EditorState.readOnly.of(true),
      EditorView.lineWrapping,
      EditorView.contentAttributes.of({ 'aria-label': label }),
    ];
    const mv = new MergeView({
      parent: host.current!,
      a: { doc: props.a, extensions: ext(props.labelA) },
      b: { doc: props.b, extensions: ext(props.labelB) },
      collapseUnchanged: { margin: 3, minSize: 6 },
    });
    const stop = followScheme(() => [mv.a, mv.b], theme);
    return () => {
      stop();
      mv.destroy();
    };
  }, [props.a, props.b, props.labelA, props.labelB]);
  return (
    <div
      ref={host}
      data-testid="diff-view"
      className="overflow-hidden rounded-md border border-slate-300 text-[13px] dark:border-slate-700 dark:bg-[#282c34]"
    />
  );
}
