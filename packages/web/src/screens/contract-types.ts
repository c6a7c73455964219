// Data contracts (docs/drift-and-contracts.md).

export type { Contract, Revision } from '../lib/queries/contracts';

import type { Revision } from '../lib/queries/contracts';

export type Column = Revision['columns'][number];
export type Rule = Revision['quality'][number];
export type Search = { project?: string; cursor?: string; direction?: string };

export const linkClass = 'text-blue-700 hover:underline dark:text-blue-300';
