import type { paths } from '@sluice/client';
import { printLines, printTable } from '../io';

// How people read a drift report: a headline, the changes and the impacts as tables. Scripts
// use --json (the report as the API answers it).

type Preview =
  paths['/organizations/{organization}/projects/{project}/pipelines/{pipeline}/drift-preview']['post']['responses'][200]['content']['application/json'];
export type Report =
  paths['/organizations/{organization}/projects/{project}/drift-reports/{report_slug}']['get']['responses'][200]['content']['application/json'];

export function printReport(r: Preview | Report) {
  const head =
    'slug' in r
      ? [
          `report ${r.slug} (${r.report_type}, ${r.status}) on ${r.data_source_slug ? `data source ${r.data_source_slug}` : `pipeline ${r.pipeline_slug}`}, ${r.created_at}`,
        ]
      : [];
  printLines([
    ...head,
    `severity: ${r.severity}`,
    `summary: ${r.summary}`,
    '',
    `changes (${r.changes.length}):`,
  ]);
  if (r.changes.length > 0)
    printTable(r.changes, [
      { header: 'SEVERITY', value: (c) => c.severity },
      { header: 'REASON', value: (c) => c.reason_code },
      { header: 'PATH', value: (c) => c.path },
      { header: 'BEFORE', value: (c) => c.before },
      { header: 'AFTER', value: (c) => c.after },
    ]);
  printLines(['', `impacts (${r.impacts.length}):`]);
  if (r.impacts.length > 0)
    printTable(r.impacts, [
      { header: 'SEVERITY', value: (i) => i.severity },
      { header: 'KIND', value: (i) => i.kind },
      { header: 'PIPELINE', value: (i) => i.pipeline_slug },
      { header: 'AT', value: (i) => i.step_slug ?? i.edge_slug },
      { header: 'MESSAGE', value: (i) => i.message },
    ]);
}

export function printReportList(reports: Report[]) {
  printTable(reports, [
    { header: 'SLUG', value: (r) => r.slug },
    { header: 'TYPE', value: (r) => r.report_type },
    { header: 'STATUS', value: (r) => r.status },
    { header: 'SEVERITY', value: (r) => r.severity },
    { header: 'SUBJECT', value: (r) => r.data_source_slug ?? r.pipeline_slug },
    { header: 'CREATED', value: (r) => r.created_at },
    { header: 'SUMMARY', value: (r) => r.summary },
  ]);
}
