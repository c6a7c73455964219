import { useEffect, useRef } from 'react';

// Drafts of forms, kept in localStorage per organization so a reload or a closed tab loses
// nothing. Callers pass only what may be stored: credential fields never reach this file.

const key = (org: string, form: string) => `sluice.draft.${org}.${form}`;

export function readDraft<T>(org: string, form: string): T | null {
  try {
    const raw = window.localStorage.getItem(key(org, form));
    return raw ? (JSON.parse(raw) as T) : null;
  } catch {
    return null;
  }
}

export function clearDraft(org: string, form: string) {
  try {
    window.localStorage.removeItem(key(org, form));
  } catch {
    // storage may be unavailable (private mode); a draft is a convenience only
  }
}

/** Saves `value` (debounced) while `enabled`; `clearDraft` after a successful save. */
export function useDraftSaver(org: string, form: string, value: unknown, enabled = true) {
  const first = useRef(true);
  const json = JSON.stringify(value);
  useEffect(() => {
    // The first render holds the restored (or initial) value: nothing new to save.
    if (first.current) {
      first.current = false;
      return;
    }
    if (!enabled) return;
    const t = window.setTimeout(() => {
      try {
        window.localStorage.setItem(key(org, form), json);
      } catch {
        // quota or private mode: drafts are best effort
      }
    }, 300);
    return () => window.clearTimeout(t);
  }, [org, form, json, enabled]);
}
