import { useQueryClient } from '@tanstack/react-query';
import { Link, Outlet, useNavigate, useParams } from '@tanstack/react-router';
import { useOrganizations } from '../lib/hooks';
import { mainPlaces as nav, settingsSections as settings } from '../lib/places';
import { signOut, useSession } from '../lib/session';
import { CommandPalette } from './command-palette';
import { Button } from './ui';

const linkClass =
  'block rounded-md px-2.5 py-1.5 text-sm text-slate-700 hover:bg-slate-200 dark:text-slate-300 dark:hover:bg-slate-800';
const activeClass = 'bg-slate-200 font-semibold text-slate-900 dark:bg-slate-800 dark:text-white';

export function OrgLayout() {
  const { org } = useParams({ from: '/authed/o/$org' });
  const orgs = useOrganizations();
  const session = useSession();
  const navigate = useNavigate();
  const qc = useQueryClient();
  return (
    <div className="flex min-h-screen">
      <a
        href="#main"
        className="sr-only focus:not-sr-only focus:absolute focus:left-2 focus:top-2 focus:z-50 focus:rounded focus:bg-white focus:p-2 dark:focus:bg-slate-900"
      >
        Skip to content
      </a>
      <aside className="sticky top-0 flex h-screen w-56 shrink-0 flex-col border-r border-slate-200 bg-white px-3 py-4 dark:border-slate-800 dark:bg-slate-900">
        <div className="mb-4 flex items-center gap-2 px-1">
          <span
            aria-hidden
            className="inline-block h-6 w-6 rounded bg-gradient-to-br from-blue-500 to-cyan-400"
          />
          <span className="text-lg font-semibold tracking-tight">Sluice</span>
        </div>
        <label
          htmlFor="org-switcher"
          className="px-1 text-xs font-medium uppercase tracking-wide text-slate-600 dark:text-slate-400"
        >
          Organization
        </label>
        <select
          id="org-switcher"
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
      </aside>
      <main id="main" className="min-w-0 flex-1 px-6 py-5">
        <Outlet />
      </main>
      <CommandPalette org={org} />
    </div>
  );
}
