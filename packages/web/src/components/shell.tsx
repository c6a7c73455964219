import { useQueryClient } from '@tanstack/react-query';
import { Link, Outlet, useNavigate, useParams, useRouterState } from '@tanstack/react-router';
import { useEffect, useRef, useState } from 'react';
import { useOrganizations } from '../lib/hooks';
import { mainPlaces as nav, settingsSections as settings } from '../lib/places';
import { signOut, useSession } from '../lib/session';
import { CommandPalette } from './command-palette';
import { Button } from './ui';

const linkClass =
  'block rounded-md px-2.5 py-1.5 text-sm text-slate-700 hover:bg-slate-200 dark:text-slate-300 dark:hover:bg-slate-800';
const activeClass = 'bg-slate-200 font-semibold text-slate-900 dark:bg-slate-800 dark:text-white';

/** The sidebar's contents: the organization switcher, the places, settings and sign-out. */
function Sidebar(props: { org: string; switcherId: string }) {
  const { org } = props;
  const orgs = useOrganizations();
  const session = useSession();
  const navigate = useNavigate();
  const qc = useQueryClient();
  return (
    <>
      <div className="mb-4 flex items-center gap-2 px-1">
        <Logo />
      </div>
      <label
        htmlFor={props.switcherId}
        className="px-1 text-xs font-medium uppercase tracking-wide text-slate-600 dark:text-slate-400"
      >
        Organization
      </label>
      <select
        id={props.switcherId}
        className="mt-1 mb-4 rounded-md border border-slate-300 bg-white px-2 py-1.5 text-sm dark:border-slate-600 dark:bg-slate-800"
        value={org}
        onChange={(e) => navigate({ to: '/o/$org/runs', params: { org: e.target.value } })}
      >
        {(orgs.data?.organizations ?? [{ slug: org, name: org }]).map((o) => (
          <option key={o.slug} value={o.slug}>
            {o.name}
          </option>
        ))}
      </select>
      <nav aria-label="Main" className="space-y-0.5">
        {nav.map((n) => (
          <Link
            key={n.to}
            to={n.to}
            params={{ org }}
            className={linkClass}
            activeProps={{ className: activeClass }}
          >
            {n.label}
          </Link>
        ))}
      </nav>
      <p className="mt-5 px-1 text-xs font-medium uppercase tracking-wide text-slate-600 dark:text-slate-400">
        Settings
      </p>
      <nav aria-label="Settings" className="mt-1 space-y-0.5">
        {settings.map(([section, label]) => (
          <Link
            key={section}
            to="/o/$org/settings/$section"
            params={{ org, section }}
            className={linkClass}
            activeProps={{ className: activeClass }}
          >
            {label}
          </Link>
        ))}
      </nav>
      <div className="mt-auto border-t border-slate-200 pt-3 dark:border-slate-800">
        <p
          className="truncate px-1 text-xs text-slate-600 dark:text-slate-400"
          title={session.data?.user.email}
        >
          {session.data?.user.email}
        </p>
        <Button
          variant="ghost"
          className="mt-1 w-full justify-start"
          onClick={async () => {
            await signOut();
            qc.clear();
            await navigate({ to: '/sign-in', search: {} });
          }}
        >
          Sign out
        </Button>
      </div>
    </>
  );
}

function Logo() {
  return (
    <>
      <span
        aria-hidden
        className="inline-block h-6 w-6 rounded bg-gradient-to-br from-blue-500 to-cyan-400"
      />
      <span className="text-lg font-semibold tracking-tight">Sluice</span>
    </>
  );
}

/**
 * Below 768 px (docs/app.md, "Narrow screens") the sidebar is a drawer behind a menu button: a
 * modal <dialog>, so focus stays inside, Escape closes it and focus returns to the button. It
 * closes when the location changes.
 */
function MenuDrawer(props: { org: string }) {
  const [open, setOpen] = useState(false);
  const dialog = useRef<HTMLDialogElement>(null);
  const href = useRouterState({ select: (s) => s.location.href });
  // biome-ignore lint/correctness/useExhaustiveDependencies: closing is what a new location does
  useEffect(() => {
    dialog.current?.close();
  }, [href]);
  useEffect(() => {
    if (open && dialog.current && !dialog.current.open) dialog.current.showModal();
  }, [open]);
  return (
    <div className="sticky top-0 z-30 flex items-center gap-2 border-b border-slate-200 bg-white px-2 py-1.5 md:hidden dark:border-slate-800 dark:bg-slate-900">
      <button
        type="button"
        aria-label="Menu"
        aria-expanded={open}
        aria-controls="menu-drawer"
        className="inline-flex h-10 w-10 items-center justify-center rounded-md text-slate-700 hover:bg-slate-200 dark:text-slate-200 dark:hover:bg-slate-800"
        onClick={() => setOpen(true)}
      >
        <svg
          aria-hidden
          viewBox="0 0 24 24"
          className="h-6 w-6"
          fill="none"
          stroke="currentColor"
          strokeWidth="2"
        >
          <path d="M4 6h16M4 12h16M4 18h16" strokeLinecap="round" />
        </svg>
      </button>
      <Logo />
      {/* biome-ignore lint/a11y/useKeyWithClickEvents: the keyboard's way out is Escape, native to a modal dialog */}
      <dialog
        id="menu-drawer"
        ref={dialog}
        aria-label="Menu"
        onClose={() => setOpen(false)}
        // A click on the backdrop (the dialog element itself, outside its panel) closes it.
        onClick={(e) => {
          if (e.target === e.currentTarget) e.currentTarget.close();
        }}
        className="m-0 h-full max-h-none w-72 max-w-[85vw] bg-transparent p-0 backdrop:bg-slate-950/50"
      >
        {open && (
          <div className="flex h-full flex-col overflow-y-auto border-r border-slate-200 bg-white px-3 py-4 text-slate-900 dark:border-slate-800 dark:bg-slate-900 dark:text-slate-100">
            <button
              type="button"
              aria-label="Close menu"
              className="absolute top-3 right-3 inline-flex h-10 w-10 items-center justify-center rounded-md text-slate-700 hover:bg-slate-200 dark:text-slate-200 dark:hover:bg-slate-800"
              onClick={() => dialog.current?.close()}
            >
              <svg
                aria-hidden
                viewBox="0 0 24 24"
                className="h-5 w-5"
                fill="none"
                stroke="currentColor"
                strokeWidth="2"
              >
                <path d="M6 6l12 12M18 6L6 18" strokeLinecap="round" />
              </svg>
            </button>
            <Sidebar org={props.org} switcherId="org-switcher-menu" />
          </div>
        )}
      </dialog>
    </div>
  );
}

export function OrgLayout() {
  const { org } = useParams({ from: '/authed/o/$org' });
  return (
    <div className="flex min-h-screen flex-col md:flex-row">
      <a
        href="#main"
        className="sr-only focus:not-sr-only focus:absolute focus:left-2 focus:top-2 focus:z-50 focus:rounded focus:bg-white focus:p-2 dark:focus:bg-slate-900"
      >
        Skip to content
      </a>
      <MenuDrawer org={org} />
      <aside className="sticky top-0 hidden h-screen w-56 shrink-0 flex-col border-r border-slate-200 bg-white px-3 py-4 md:flex dark:border-slate-800 dark:bg-slate-900">
        <Sidebar org={org} switcherId="org-switcher" />
      </aside>
      <main id="main" className="min-w-0 flex-1 px-3 py-4 md:px-6 md:py-5">
        <Outlet />
      </main>
      <CommandPalette org={org} />
    </div>
  );
}
