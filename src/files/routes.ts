import type { FastifyInstance } from 'fastify';
import type { PluginOptions } from '../http/context.ts';

// Routes of this resource: written by its issue's work.
export async function fileRoutes(_app: FastifyInstance, _opts: PluginOptions): Promise<void> {}
