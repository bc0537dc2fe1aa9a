import type { FastifyInstance } from 'fastify';
import { CredentialMetadata } from './schemas.ts';

export async function authRoutes(app: FastifyInstance): Promise<void> {
  app.get(
    '/v1/auth/validate',
    {
      config: { operation: 'validateCredential', scopes: [], category: 'Read' },
      schema: { summary: 'Validate the API key', tags: ['Credential'], response: { 200: CredentialMetadata } },
    },
    async (request) => {
      const p = request.principal;
      return { active: true, tokenType: 'api_key', subjectType: p.subjectType, scopes: p.scopes ?? [] };
    },
  );
}
