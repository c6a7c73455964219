import { type ReactNode, useRef } from 'react';
import { Button } from './ui';

/**
 * A button that asks before it acts, in a native modal dialog: focus moves into it, Escape
 * cancels, and focus returns to the button.
 */
export function ConfirmButton(props: {
  label: ReactNode;
  /** Accessible name of the opening button, when the label alone is ambiguous in a list. */
  ariaLabel?: string;
  title: string;
  children: ReactNode;
  confirmLabel: string;
  onConfirm: () => void;
  disabled?: boolean;
  variant?: 'danger' | 'secondary' | 'ghost';
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const close = () => ref.current?.close();
  return (
    <>
      <Button
        variant={props.variant ?? 'ghost'}
        aria-label={props.ariaLabel}
        disabled={props.disabled}
        onClick={() => ref.current?.showModal()}
      >
        {props.label}
      </Button>
      <dialog
        ref={ref}
        aria-label={props.title}
        className="m-auto w-full max-w-md rounded-lg border border-slate-200 bg-white p-5 text-slate-900 shadow-xl backdrop:bg-slate-950/50 dark:border-slate-700 dark:bg-slate-900 dark:text-slate-100"
      >
        <h2 className="text-base font-semibold">{props.title}</h2>
        <div className="mt-2 text-sm text-slate-700 dark:text-slate-300">{props.children}</div>
        <div className="mt-4 flex justify-end gap-2">
          <Button autoFocus onClick={close}>
            Cancel
          </Button>
          <Button
            variant="danger"
            onClick={() => {
              close();
              props.onConfirm();
            }}
          >
            {props.confirmLabel}
          </Button>
        </div>
      </dialog>
    </>
  );
}
