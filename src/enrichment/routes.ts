// The enrichment operations (docs/enrichment.md): start a run on an account or a contact, and
// read a run. The scope of a POST is the record type's update scope, one route per type; a GET
// needs the read scope of the run's record type, known once the run is found. A key that lacks a
// read scope is answered alike for a run it cannot read and an id that names no run, so that it
// never learns which runs exist (docs/enrichment.md).
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { Scope } from '../auth/scopes.ts';
import type { PluginOptions } from '../http/context.ts';
import { challenge } from '../http/bearer.ts';
import { serviceContext } from '../http/service-context.ts';
import { AppError } from '../lib/errors.ts';
import { PROVIDERS } from './providers.ts';
import { EnrichAnswer, EnrichBody, EnrichmentRun, EntityIdParams, RunIdParams } from './schemas.ts';
import { type EnrichmentEnv, getRun, requestRun } from './service.ts';

const TYPES = [
  { plural: 'accounts', entityType: 'account', operation: 'enrichAccount' },
  { plural: 'contacts', entityType: 'contact', operation: 'enrichContact' },
] as const;

/** The read scopes of the types a run can be on; a key needs one of them to read any run. */
const RUN_READ_SCOPES: readonly Scope[] = ['accounts:read', 'contacts:read'];

export async function enrichmentRoutes(base: FastifyInstance, opts: PluginOptions): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const { ctx, write } = serviceContext(opts);
  const env: EnrichmentEnv = { mode: opts.config.enrichment.mode, providers: PROVIDERS };
  const tags = ['Enrichment'];

  for (const { plural, entityType, operation } of TYPES) {
    app.post(
      `/v1/enrichmentRun/${plural}/:entityId`,
      {
        // The body is optional: a POST without one asks for every empty field.
        config: { operation, scopes: [`${plural}:update` as Scope], category: 'Write', idempotent: true, optionalBody: true },
        schema: {
          summary: `Enrich ${entityType === 'account' ? 'an account' : 'a contact'}: start a run that fills empty fields in the background`,
          tags,
          params: EntityIdParams,
          body: EnrichBody,
          response: { 200: EnrichAnswer },
        },
      },
      (request, reply) =>
        write(request, reply, (c) => requestRun(c, env, { entityType, entityId: request.params.entityId, fields: request.body.fields, trigger: 'manual' })),
    );
  }

  app.get(
    '/v1/enrichmentRun/:runId',
    {
      // The scope depends on the run's record type: checked below, once the run is found. A key
      // with neither read scope is refused by the pipeline, before the run id is validated.
      config: { operation: 'getEnrichmentRun', scopes: [], anyScopes: RUN_READ_SCOPES, category: 'Read', errors: ['insufficient_scope'] },
      schema: {
        summary: 'Retrieve an enrichment run',
        description: 'Requires `accounts:read` for a run on an account, `contacts:read` for one on a contact.',
        tags,
        params: RunIdParams,
        response: { 200: EnrichmentRun },
      },
    },
    async (request) => {
      const granted = request.principal.scopes;
      const missing = granted === null ? [] : RUN_READ_SCOPES.filter((s) => !granted.includes(s));
      // The challenge of RFC 6750 names the scopes the key lacks (src/http/bearer.ts).
      const refusal = (message: string) => new AppError('insufficient_scope', message, { headers: challenge('insufficient_scope', message, missing) });
      // A key that cannot read runs of one type is answered alike for such a run and for an id
      // that names no run, so that it never learns which runs of that type exist.
      const unreadable = () => refusal(`This API key lacks the scope ${missing.join(' and ')}: it reads no run on that type, nor learns which exist.`);
      const run = await getRun(ctx(request), request.params).catch((err: unknown) => {
        throw missing.length > 0 && err instanceof AppError && err.code === 'resource_not_found' ? unreadable() : err;
      });
      if (missing.includes(`${run.entityType}s:read` as Scope)) throw unreadable();
      return run;
    },
  );
}
