import { json } from '@codemirror/lang-json';
import { sql } from '@codemirror/lang-sql';
import { MergeView } from '@codemirror/merge';
import { EditorState } from '@codemirror/state';
import { oneDark } from '@codemirror/theme-one-dark';
import { basicSetup, EditorView } from 'codemirror';
import { useEffect, useRef } from 'react';

const dark = () => window.matchMedia('(prefers-color-scheme: dark)').matches;
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
    view.current = new EditorView({
      parent: host.current!,
      state: EditorState.create({
        doc: props.value,
        extensions: [
          basicSetup,
          lang(props.language),
          ...(dark() ? [oneDark] : []),
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
    return () => view.current?.destroy();
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
    const ext = (label: string) => [
      basicSetup,
      json(),
      ...(dark() ? [oneDark] : []),
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
    return () => mv.destroy();
  }, [props.a, props.b, props.labelA, props.labelB]);
  return (
    <div
      ref={host}
      data-testid="diff-view"
      className="overflow-hidden rounded-md border border-slate-300 text-[13px] dark:border-slate-700 dark:bg-[#282c34]"
    />
  );
}
