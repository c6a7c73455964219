import type { ButtonHTMLAttributes, InputHTMLAttributes, ReactNode, Ref, SelectHTMLAttributes } from 'react';
import { forwardRef, useId } from 'react';
import { ApiError } from '../lib/api';

const cx = (...c: (string | false | null | undefined)[]) => c.filter(Boolean).join(' ');

type ButtonProps = ButtonHTMLAttributes<HTMLButtonElement> & {
  variant?: 'primary' | 'secondary' | 'danger' | 'ghost';
};

export const Button = forwardRef<HTMLButtonElement, ButtonProps>(function Button(
  { variant = 'secondary', className, type = 'button', ...rest },
  ref,
) {
  const styles = {
    primary:
      'bg-blue-600 text-white hover:bg-blue-700 disabled:bg-blue-400 dark:bg-blue-500 dark:hover:bg-blue-400 dark:text-slate-950',
    secondary:
      'border border-slate-300 bg-white text-slate-800 hover:bg-slate-100 dark:border-slate-600 dark:bg-slate-800 dark:text-slate-100 dark:hover:bg-slate-700',
    danger: 'bg-red-600 text-white hover:bg-red-700 disabled:bg-red-400',
    ghost: 'text-slate-700 hover:bg-slate-200 dark:text-slate-200 dark:hover:bg-slate-800',
  }[variant];
  return (
    <button
      ref={ref}
      type={type}
      className={cx(
        'inline-flex items-center gap-1.5 rounded-md px-3 py-1.5 text-sm font-medium disabled:cursor-not-allowed disabled:opacity-70',
        styles,
        className,
      )}
      {...rest}
    />
  );
});

const inputClass =
  'block w-full rounded-md border border-slate-300 bg-white px-2.5 py-1.5 text-sm text-slate-900 placeholder:text-slate-500 dark:border-slate-600 dark:bg-slate-900 dark:text-slate-100 dark:placeholder:text-slate-400';

export const Input = forwardRef<HTMLInputElement, InputHTMLAttributes<HTMLInputElement>>(function Input(
  { className, ...rest },
  ref,
) {
  return <input ref={ref} className={cx(inputClass, className)} {...rest} />;
});

export const Select = forwardRef<HTMLSelectElement, SelectHTMLAttributes<HTMLSelectElement>>(function Select(
  { className, ...rest },
  ref,
) {
  return <select ref={ref} className={cx(inputClass, 'pr-8', className)} {...rest} />;
});

/** A labelled control: the label is tied to the control by id, hints and errors by aria-describedby. */
export function Field(props: {
  label: string;
  hint?: string;
  error?: string;
  children: (ids: { id: string; describedBy?: string; invalid: boolean }) => ReactNode;
}) {
  const id = useId();
  const hintId = props.hint ? `${id}-hint` : undefined;
  const errId = props.error ? `${id}-err` : undefined;
  const describedBy = [hintId, errId].filter(Boolean).join(' ') || undefined;
  return (
    <div className="space-y-1">
      <label htmlFor={id} className="block text-sm font-medium text-slate-800 dark:text-slate-200">
        {props.label}
      </label>
      {props.children({ id, describedBy, invalid: Boolean(props.error) })}
      {props.hint && (
        <p id={hintId} className="text-xs text-slate-600 dark:text-slate-400">
          {props.hint}
        </p>
      )}
      {props.error && (
        <p id={errId} className="text-xs text-red-700 dark:text-red-400">
          {props.error}
        </p>
      )}
    </div>
  );
}

/** A Field of one text Input; `input` is the rest of the Input's props, e.g. `form.register('name')`. */
export function InputField(props: {
  label: string;
  hint?: string;
  error?: string;
  input: InputHTMLAttributes<HTMLInputElement> & { ref?: Ref<HTMLInputElement> };
}) {
  return (
    <Field label={props.label} hint={props.hint} error={props.error}>
      {({ id, describedBy, invalid }) => (
        <Input id={id} aria-describedby={describedBy} aria-invalid={invalid} {...props.input} />
      )}
    </Field>
  );
}

export function Card(props: {
  title?: ReactNode;
  actions?: ReactNode;
  children: ReactNode;
  className?: string;
}) {
  return (
    <section
      className={cx(
        'min-w-0 rounded-lg border border-slate-200 bg-white shadow-sm dark:border-slate-800 dark:bg-slate-900',
        props.className,
      )}
    >
      {(props.title || props.actions) && (
        <header className="flex flex-wrap items-center justify-between gap-2 border-b border-slate-200 px-4 py-2.5 dark:border-slate-800">
          <h2 className="text-sm font-semibold">{props.title}</h2>
          <div className="flex gap-2">{props.actions}</div>
        </header>
      )}
      {/* A table wider than the card scrolls inside it, never the page (docs/app.md, "Narrow screens"). */}
      <div className="overflow-x-auto p-4">{props.children}</div>
    </section>
  );
}

export function PageHeader(props: { title: ReactNode; subtitle?: ReactNode; actions?: ReactNode }) {
  return (
    <div className="mb-4 flex flex-wrap items-end justify-between gap-3">
      <div>
        <h1 className="text-xl font-semibold tracking-tight">{props.title}</h1>
        {props.subtitle && (
          <p className="mt-0.5 text-sm text-slate-600 dark:text-slate-400">{props.subtitle}</p>
        )}
      </div>
      <div className="flex flex-wrap gap-2">{props.actions}</div>
    </div>
  );
}

const stateColors: Record<string, string> = {
  queued: 'bg-slate-200 text-slate-800 dark:bg-slate-700 dark:text-slate-100',
  pending: 'bg-slate-200 text-slate-800 dark:bg-slate-700 dark:text-slate-100',
  running: 'bg-blue-100 text-blue-900 dark:bg-blue-900 dark:text-blue-100',
  canceling: 'bg-amber-100 text-amber-900 dark:bg-amber-900 dark:text-amber-100',
  succeeded: 'bg-emerald-100 text-emerald-900 dark:bg-emerald-900 dark:text-emerald-100',
  failed: 'bg-red-100 text-red-900 dark:bg-red-900 dark:text-red-100',
  canceled: 'bg-zinc-200 text-zinc-800 dark:bg-zinc-700 dark:text-zinc-100',
  skipped: 'bg-zinc-100 text-zinc-700 dark:bg-zinc-800 dark:text-zinc-200',
};

export function StateBadge({ state }: { state: string }) {
  return (
    <span
      className={cx(
        'inline-flex rounded px-1.5 py-0.5 text-xs font-medium',
        stateColors[state] ?? stateColors.pending,
      )}
      data-state={state}
    >
      {state}
    </span>
  );
}

export function Badge({
  children,
  tone = 'slate',
}: {
  children: ReactNode;
  tone?: 'slate' | 'amber' | 'red' | 'green';
}) {
  const t = {
    slate: 'bg-slate-100 text-slate-800 dark:bg-slate-800 dark:text-slate-200',
    amber: 'bg-amber-100 text-amber-900 dark:bg-amber-900 dark:text-amber-100',
    red: 'bg-red-100 text-red-900 dark:bg-red-900 dark:text-red-100',
    green: 'bg-emerald-100 text-emerald-900 dark:bg-emerald-900 dark:text-emerald-100',
  }[tone];
  return <span className={cx('inline-flex rounded px-1.5 py-0.5 text-xs font-medium', t)}>{children}</span>;
}

export function ErrorNote({ error }: { error: unknown }) {
  if (!error) return null;
  const e = error instanceof ApiError ? error : null;
  return (
    <div
      role="alert"
      className="rounded-md border border-red-300 bg-red-50 px-3 py-2 text-sm text-red-900 dark:border-red-800 dark:bg-red-950 dark:text-red-100"
    >
      <strong className="font-semibold">{e?.code ?? 'Error'}</strong>:{' '}
      {error instanceof Error ? error.message : String(error)}
      {e && e.validationErrors.length > 0 && (
        <ul className="mt-1 list-disc pl-5">
          {e.validationErrors.map((v) => (
            <li key={`${v.path}${v.code}`}>
              <code>{v.path}</code>: {v.message}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

export function Empty({ children }: { children: ReactNode }) {
  return <p className="py-8 text-center text-sm text-slate-600 dark:text-slate-400">{children}</p>;
}

export const tableClass = 'w-full text-left text-sm';
export const thClass =
  'border-b border-slate-200 px-3 py-2 text-xs font-semibold uppercase tracking-wide text-slate-600 dark:border-slate-800 dark:text-slate-400';
export const tdClass = 'border-b border-slate-100 px-3 py-2 dark:border-slate-800';

export function Pager(props: { hasMore: boolean; hasPrev: boolean; onNext: () => void; onPrev: () => void }) {
  return (
    <nav aria-label="Pagination" className="mt-3 flex justify-end gap-2">
      <Button onClick={props.onPrev} disabled={!props.hasPrev}>
        Previous
      </Button>
      <Button onClick={props.onNext} disabled={!props.hasMore}>
        Next
      </Button>
    </nav>
  );
}

type CursorPage = { has_more: boolean; next_cursor: string | null; prev_cursor: string | null };

/** The pager of a cursor-paged list: moves by the page's own cursors; nothing until it loaded. */
export function CursorPager(props: {
  page: CursorPage | undefined;
  cursor: string | undefined;
  go: (to: { cursor?: string; direction: 'next' | 'prev' }) => void;
}) {
  const { page, go } = props;
  if (!page) return null;
  return (
    <Pager
      hasMore={page.has_more}
      hasPrev={Boolean(props.cursor)}
      onNext={() => go({ cursor: page.next_cursor ?? undefined, direction: 'next' })}
      onPrev={() => go({ cursor: page.prev_cursor ?? undefined, direction: 'prev' })}
    />
  );
}
