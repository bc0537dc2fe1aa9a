// Route schemas are compiled by the first request that uses them, not when the route is added
// (docs/performance.md §Schemas compiled on first use). Ajv's validators and fast-json-stringify's
// serializers are generated JavaScript (tens of kilobytes of source for a large response); compiled
// at start, every route's would be held by a process that may never serve it. A wrapper compiles
// its schema on its first call and keeps the result; `compileAll` compiles what is left, so that a
// test can check that every schema compiles. The compilers themselves (Ajv, fast-json-stringify)
// are loaded by the first schema compiled (docs/performance.md §Loading only what is configured).
import { createRequire } from 'node:module';
import type SerializerSelectorModule from '@fastify/fast-json-stringify-compiler';
import type { SerializerFactory } from '@fastify/fast-json-stringify-compiler';
import type { FastifySchemaCompiler } from 'fastify';

const require = createRequire(import.meta.url);

type Validate = ((data: unknown, ctx?: unknown) => unknown) & { errors?: unknown; schemaEnv?: unknown };

export interface LazySchemas {
  /** Wraps a validator compiler: each validator compiles on its first call. */
  validators(compile: FastifySchemaCompiler<unknown>): FastifySchemaCompiler<unknown>;
  /** Fastify's default serializer factory (`schemaController.compilersFactory.buildSerializer`), compiling on first use. */
  buildSerializer: SerializerFactory;
  /** Compiles every schema not compiled yet (throws a schema's error); returns how many it compiled. */
  compileAll(): number;
}

export function lazySchemas(): LazySchemas {
  const pending = new Set<() => unknown>();
  const defer = <F>(build: () => F): (() => F) => {
    let fn: F | undefined;
    const get = (): F => {
      if (fn === undefined) {
        fn = build();
        pending.delete(get);
      }
      return fn;
    };
    pending.add(get);
    return get;
  };
  // Loaded synchronously, since a compile is.
  let defaultSerializers: SerializerFactory | undefined;
  const serializers = (): SerializerFactory => (defaultSerializers ??= (require('@fastify/fast-json-stringify-compiler') as typeof SerializerSelectorModule)());
  return {
    validators: (compile) => (route) => {
      const get = defer(() => compile(route) as Validate);
      const validate: Validate = (data, ctx) => {
        const f = get();
        const ok = f(data, ctx);
        // Fastify reads a failed validation's errors from the function it called.
        validate.errors = f.errors;
        return ok;
      };
      // Fastify passes the parent object (so that a coercion can replace the root value) to an
      // Ajv validator, which it tells by this property; every validator here is Ajv's.
      validate.schemaEnv = true;
      return validate as ReturnType<FastifySchemaCompiler<unknown>>;
    },
    buildSerializer: (externalSchemas, options) => {
      let compile: ReturnType<SerializerFactory> | undefined;
      return (route) => {
        const get = defer(() => (compile ??= serializers()(externalSchemas, options))(route));
        return (data) => get()(data);
      };
    },
    compileAll: () => {
      const left = [...pending];
      for (const get of left) get();
      return left.length;
    },
  };
}
