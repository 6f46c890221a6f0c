import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import type { TSchema } from '@sinclair/typebox';
import type { FastifySerializerCompiler } from 'fastify';

// Responses are written by fast-json-stringify from each route's response schemas, as Fastify does by default. Fastify
// compiles them as an app starts: about 1.4 s of CPU for this API, once per app. A process that builds several apps
// (the tests build hundreds) compiles each schema once: its serializer depends on nothing but the schema and `shared`.

type Serialize = (data: unknown) => string;
/** The serializers compiled so far, for each set of shared schemas, by route schema. */
const compiledFor = new WeakMap<TSchema[], Map<string, Serialize>>();

/** The response serializer of an app; `shared` are the schemas that routes refer to by `$ref`. */
export function serializerCompiler(shared: TSchema[]): FastifySerializerCompiler<TSchema> {
  const compile = SerializerSelector()(Object.fromEntries(shared.map((schema) => [schema.$id, schema])), {});
  const compiled = compiledFor.get(shared) ?? new Map<string, Serialize>();
  compiledFor.set(shared, compiled);
  return (route) => {
    const key = JSON.stringify(route.schema);
    let serialize = compiled.get(key);
    if (!serialize) {
      serialize = compile({ ...route, httpStatus: route.httpStatus ?? '' }) as Serialize;
      compiled.set(key, serialize);
    }
    return serialize;
  };
}
