// Test-only routes that exercise the shared request pipeline (JSON rules, validation codes,
// idempotency) independently of any one resource.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../src/http/context.ts';
import { serviceContext } from '../../src/http/service-context.ts';
import { AppError } from '../../src/lib/errors.ts';
import { createHttpLinks } from '../../src/lib/links.ts';
import { createUser } from '../../src/users/service.ts';

export const EchoBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 10 }),
    count: Type.Optional(Type.Integer({ minimum: 0 })),
    nested: Type.Optional(Type.Object({ tags: Type.Array(Type.String()) }, { additionalProperties: false })),
  },
  { additionalProperties: false },
);

export function pipelineRoutes(base: FastifyInstance, deps: Deps): void {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const { write } = serviceContext({ deps, links: createHttpLinks(undefined) });
  app.post(
    '/v1/test/echo',
    { config: { operation: 'testEcho', scopes: ['lists:create'], category: 'Write' }, schema: { body: EchoBody } },
    async (request) => ({
      received: request.body,
    }),
  );
  app.get(
    '/v1/test/page',
    {
      config: { operation: 'testPage', scopes: [], category: 'Search' },
      schema: { querystring: Type.Object({ limit: Type.Integer({ minimum: 1, maximum: 25, default: 25 }), offset: Type.Integer({ minimum: 0, default: 0 }) }) },
    },
    async (request) => ({ query: request.query }),
  );
  // Creates a user named in the body: a write whose effect tests can count. Two operations share
  // the handler, for the idempotency namespace. `fail` asks for a failure: `client` (400),
  // `server` (500), `slow` (a 300 ms handler), `until-ready` (400 until the workspace has a user
  // ready@x.test, a cause a client can fix and then retry).
  for (const [url, operation] of [
    ['/v1/test/users', 'testCreateUser'],
    ['/v1/test/users-too', 'testCreateUserToo'],
  ] as const) {
    app.post(
      url,
      {
        config: { operation, scopes: [], category: 'Write', idempotent: true },
        schema: { body: Type.Object({ email: Type.String(), fail: Type.Optional(Type.String()) }, { additionalProperties: false }) },
      },
      async (request, reply) => {
        const body = request.body;
        return write(request, reply, async (ctx) => {
          if (body.fail === 'until-ready') {
            const ready = await ctx.db
              .selectFrom('users')
              .select('id')
              .where('workspace_id', '=', ctx.actor.workspaceId)
              .where('email', '=', 'ready@x.test')
              .executeTakeFirst();
            if (!ready) throw new AppError('invalid_value', 'not ready yet', { param: 'fail' });
          }
          const user = await createUser(ctx, { email: body.email });
          if (body.fail === 'client') throw new AppError('invalid_value', 'asked to fail', { param: 'fail' });
          if (body.fail === 'server') throw new Error('boom');
          if (body.fail === 'slow') await new Promise((r) => setTimeout(r, 300));
          return { id: user.id, email: user.email };
        });
      },
    );
  }
}
