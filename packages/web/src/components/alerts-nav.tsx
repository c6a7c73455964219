import { Link } from '@tanstack/react-router';

const tabs = [
  { to: '/o/$org/notifications', label: 'Notifications' },
  { to: '/o/$org/alerts/policies', label: 'Policies' },
  { to: '/o/$org/alerts/destinations', label: 'Destinations' },
  { to: '/o/$org/alerts/attempts', label: 'Delivery attempts' },
] as const;

/** The alerting screens side by side: what was raised, who gets it, where, and what was sent. */
export function AlertsNav({ org }: { org: string }) {
  return (
    <nav
      aria-label="Alerting"
      className="mb-4 flex flex-wrap gap-1 border-b border-slate-200 dark:border-slate-800"
    >
      {tabs.map((t) => (
        <Link
          key={t.to}
          to={t.to}
          params={{ org }}
          className="-mb-px border-b-2 border-transparent px-3 py-1.5 text-sm text-slate-700 hover:text-slate-950 dark:text-slate-300 dark:hover:text-white"
          activeProps={{
            className: 'border-blue-600 font-semibold text-slate-950 dark:border-blue-400 dark:text-white',
          }}
        >
          {t.label}
        </Link>
      ))}
    </nav>
  );
}
