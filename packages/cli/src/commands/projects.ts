import type { Command } from 'commander';
import { action, cols, listAction } from '../resource';

const LIST = '/organizations/{organization}/projects';
const ITEM = '/organizations/{organization}/projects/{project}';
const FIELDS = ['name', 'slug', 'description'];

export function projectsCommand(program: Command) {
  const noun = program.command('projects').description('Manage projects');
  const columns = cols('slug', 'name', 'description', 'created_at');
  listAction(noun, 'org', { description: 'List projects', path: LIST, key: 'projects', columns });
  action(noun, 'org', {
    name: 'get',
    args: ['<project>'],
    description: 'Show a project',
    method: 'GET',
    path: ITEM,
  });
  action(noun, 'org', {
    name: 'create',
    description: 'Create a project',
    method: 'POST',
    path: LIST,
    body: FIELDS,
  });
  action(noun, 'org', {
    name: 'update',
    args: ['<project>'],
    description: 'Rename or describe a project',
    method: 'PATCH',
    path: ITEM,
    body: ['name', 'description'],
  });
  action(noun, 'org', {
    name: 'delete',
    args: ['<project>'],
    description: 'Delete a project',
    method: 'DELETE',
    path: ITEM,
  });
}
