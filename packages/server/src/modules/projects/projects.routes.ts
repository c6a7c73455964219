import type { Deps } from '../../context';
import { access } from '../../http/access';
import { scopeOf } from '../../http/auth';
import { orgParams } from '../../http/fields';
import { errorResponses, noContent } from '../../http/openapi';
import type { TypedApp } from '../../http/typed-app';
import { projectEnvironmentsRoutes } from './project-environments.routes';
import * as s from './projects.schemas';
import * as svc from './projects.service';

export function projectsRoutes(app: TypedApp, deps: Deps) {
  const ctx = (req: { id: string }) => ({ deps, requestId: req.id });
  const tags = ['Projects'];

  app.get('/organizations/:organization/projects', {
    config: access.org('projects.read'),
    schema: {
      tags,
      summary: 'List projects',
      params: orgParams,
      querystring: s.listProjectsQuery,
      response: { 200: s.projectListSchema, ...errorResponses },
    },
    handler: async (req) => {
      const page = await svc.listProjects(ctx(req), scopeOf(req), req.query);
      return {
        projects: page.items,
        has_more: page.has_more,
        next_cursor: page.next_cursor,
        prev_cursor: page.prev_cursor,
      };
    },
  });

  app.post('/organizations/:organization/projects', {
    config: access.org('projects.write'),
    schema: {
      tags,
      summary: 'Create a project',
      params: orgParams,
      body: s.createProjectBody,
      response: { 201: s.projectSchema, ...errorResponses },
    },
    handler: async (req, reply) =>
      reply.status(201).send(await svc.createProject(ctx(req), scopeOf(req), req.body)),
  });

  app.get('/organizations/:organization/projects/:project', {
    config: access.org('projects.read'),
    schema: {
      tags,
      summary: 'Get a project',
      params: s.projectParams,
      response: { 200: s.projectSchema, ...errorResponses },
    },
    handler: async (req) => svc.getProject(ctx(req), scopeOf(req), req.params.project),
  });

  app.patch('/organizations/:organization/projects/:project', {
    config: access.org('projects.write'),
    schema: {
      tags,
      summary: 'Rename or describe a project',
      params: s.projectParams,
      body: s.updateProjectBody,
      response: { 200: s.projectSchema, ...errorResponses },
    },
    handler: async (req) => svc.updateProject(ctx(req), scopeOf(req), req.params.project, req.body),
  });

  app.delete('/organizations/:organization/projects/:project', {
    config: access.org('projects.write'),
    schema: {
      tags,
      summary: 'Delete a project (its environments stay; only the links go)',
      params: s.projectParams,
      response: { ...noContent, ...errorResponses },
    },
    handler: async (req, reply) => {
      await svc.deleteProject(ctx(req), scopeOf(req), req.params.project);
      return reply.status(204).send(null);
    },
  });

  projectEnvironmentsRoutes(app, deps);
}
