import type { Environment, Project } from '../lib/types';
import { Select } from './ui';

/** Project and environment pickers that write to the URL. */
export function PlacePicker(props: {
  projects: Pick<Project, 'slug' | 'name'>[];
  environments?: Environment[];
  project?: string;
  env?: string;
  onChange: (next: { project?: string; env?: string }) => void;
}) {
  return (
    <div className="flex flex-wrap items-end gap-3">
      <div>
        <label
          htmlFor="pick-project"
          className="block text-xs font-medium text-slate-600 dark:text-slate-400"
        >
          Project
        </label>
        <Select
          id="pick-project"
          value={props.project ?? ''}
          onChange={(e) => props.onChange({ project: e.target.value, env: undefined })}
        >
          {props.projects.map((p) => (
            <option key={p.slug} value={p.slug}>
              {p.name}
            </option>
          ))}
        </Select>
      </div>
      {props.environments && (
        <div>
          <label htmlFor="pick-env" className="block text-xs font-medium text-slate-600 dark:text-slate-400">
            Environment
          </label>
          <Select
            id="pick-env"
            value={props.env ?? ''}
            onChange={(e) => props.onChange({ project: props.project, env: e.target.value })}
          >
            {props.environments.map((e) => (
              <option key={e.slug} value={e.slug}>
                {e.name}
                {e.protected ? ' (protected)' : ''}
              </option>
            ))}
          </Select>
        </div>
      )}
    </div>
  );
}
