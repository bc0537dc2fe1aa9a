// The baseline of every benchmark: a bare Fastify hello-world route, nothing else, on PORT.
import Fastify from 'fastify';

if (import.meta.main) {
  const app = Fastify({ logger: false });
  app.get('/', async () => ({ hello: 'world' }));
  await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
  process.send?.('listening');
  process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
}
