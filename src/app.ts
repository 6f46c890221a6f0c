import { randomUUID } from 'node:crypto';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { Config } from './config.ts';
import { Account, AccountCreate, ApiKey, ApiKeyCreate, CreatedApiKey, Me } from './domain/account.ts';
import { Endpoint, EndpointCreate, EndpointUpdate } from './domain/endpoint.ts';
import { RegistryAuth, RegistryAuthCreate, RegistryAuthCredentials } from './domain/registry-auth.ts';
import { FieldChangeSchema, Revision, RollbackInput } from './domain/revision.ts';
import { ResolvedTemplateSchema, ResolveInput, Secret, SecretPut } from './domain/secret.ts';
import { Template, TemplateCreate, TemplateListItem, TemplateUpdate } from './domain/template.ts';
import { UsageReport } from './domain/usage.ts';
import { authenticate, refuseWritesOfReadKeys } from './http/plugins/auth.ts';
import { registerCompression } from './http/plugins/compression.ts';
import { registerCors } from './http/plugins/cors.ts';
import { registerJsonParser } from './http/plugins/json.ts';
import { RequestLog, redactingLogger, requestLogger } from './http/plugins/log.ts';
import { registerMetrics } from './http/plugins/metrics.ts';
import { registerOpenApi } from './http/plugins/openapi.ts';
import { answerClientError, Problem, problem, registerProblemHandlers, sendProblem } from './http/plugins/problem.ts';
import { rateLimit } from './http/plugins/rate-limit.ts';
import { serializerCompiler } from './http/plugins/serialization.ts';
import { refuseUnacceptableText, unreadablePathParameters } from './http/plugins/text.ts';
import { registerUi } from './http/plugins/ui.ts';
import { validatorCompiler } from './http/plugins/validation.ts';
import { accountRoutes } from './http/routes/accounts.ts';
import { endpointRoutes } from './http/routes/endpoints.ts';
import { healthRoutes } from './http/routes/health.ts';
import { meRoutes } from './http/routes/me.ts';
import { registryAuthRoutes } from './http/routes/registry-auths.ts';
import { secretRoutes } from './http/routes/secrets.ts';
import { templateRoutes } from './http/routes/templates.ts';
import { NoQuery } from './http/schemas.ts';
import type { Logger } from './logger.ts';
import { Release, ReleaseProgress } from './releases/release.ts';
import type { Podplate } from './usecases/podplate.ts';

// The HTTP app, built from its parts: plugins, schemas and routes over the use cases (used by the server, tests and
// bench).

declare module 'fastify' {
  interface FastifyInstance {
    podplate: Podplate;
  }
}

export interface AppOptions {
  /** The application the routes serve; HTTP reaches the data through it alone. */
  podplate: Podplate;
  config: Pick<Config, 'REQUEST_TIMEOUT_MS' | 'HEADERS_TIMEOUT_MS' | 'RATE_LIMIT_PER_MINUTE'> &
    Partial<Pick<Config, 'TRUST_PROXY' | 'METRICS_TOKEN' | 'CORS_ORIGINS'>>;
  /** The process's logger (the server's), or logger options (tests), or none. */
  logger?: Logger | FastifyServerOptions['logger'];
  /** Where the built web UI is (ui/dist by default); without one, / explains how to build it. */
  uiDir?: string;
}

export const BODY_LIMIT = 1024 * 1024;
/** The longest path segment the router reads. */
const MAX_PARAM_LENGTH = 200;
const SHARED_SCHEMAS = [
  Template,
  TemplateListItem,
  TemplateCreate,
  TemplateUpdate,
  FieldChangeSchema,
  Revision,
  RollbackInput,
  UsageReport,
  Endpoint,
  EndpointCreate,
  EndpointUpdate,
  Me,
  Account,
  AccountCreate,
  ApiKey,
  ApiKeyCreate,
  CreatedApiKey,
  Release,
  ReleaseProgress,
  RegistryAuth,
  RegistryAuthCreate,
  RegistryAuthCredentials,
  Secret,
  SecretPut,
  ResolveInput,
  ResolvedTemplateSchema,
  Problem,
];

/** TRUST_PROXY as Fastify takes it: "true", a number of proxy hops, or a list of proxy addresses and ranges. */
export function trustProxy(setting = 'false'): boolean | string[] | ((address: string, hop: number) => boolean) {
  if (setting === 'true' || setting === 'false') return setting === 'true';
  if (/^\d+$/.test(setting)) {
    const hops = Number(setting);
    return (_address, hop) => hop < hops;
  }
  return setting.split(',').map((s) => s.trim());
}

/** The HTTP application: what the server listens with, and what tests and benchmarks inject into. */
export async function buildApp({ podplate, config, logger = false, uiDir }: AppOptions): Promise<FastifyInstance> {
  const instance = typeof logger === 'object' && 'child' in logger ? (logger as Logger) : undefined;
  const requestLog = new RequestLog();
  const app = Fastify({
    // Logged URLs are redacted of keys; a request the HTTP parser refuses is answered with a problem, its bytes unlogged.
    ...(instance
      ? { loggerInstance: instance as FastifyBaseLogger }
      : { logger: redactingLogger(logger as FastifyServerOptions['logger']) }),
    // One line per request, ours, in place of Fastify's two.
    logController: requestLog,
    childLoggerFactory: requestLogger,
    clientErrorHandler: answerClientError,
    bodyLimit: BODY_LIMIT,
    // Slow clients can't hold the server: headers must arrive within HEADERS_TIMEOUT_MS, the whole request within
    // REQUEST_TIMEOUT_MS, and a silent connection is closed after REQUEST_TIMEOUT_MS.
    requestTimeout: config.REQUEST_TIMEOUT_MS,
    connectionTimeout: config.REQUEST_TIMEOUT_MS,
    // An idle keep-alive connection is closed well before the connection timeout, and the Keep-Alive header says
    // so: a client never reuses a connection the server is about to drop.
    keepAliveTimeout: Math.max(1000, Math.min(72_000, Math.floor(config.REQUEST_TIMEOUT_MS / 2))),
    http: {
      headersTimeout: config.HEADERS_TIMEOUT_MS,
      connectionsCheckingInterval: Math.min(1000, config.HEADERS_TIMEOUT_MS),
    },
    requestIdHeader: false,
    // Which address a request comes from (for the throttling of failed authentications): the socket's, unless a
    // proxy in front is trusted to say it in X-Forwarded-For.
    trustProxy: trustProxy(config.TRUST_PROXY),
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && /^[\w.:-]{1,128}$/.test(given) ? given : randomUUID();
    },
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    // While closing, a request arriving on an open connection is served, with `Connection: close` (Fastify adds
    // it), rather than refused: the client that sent it is not left with an error for work the server can still do.
    return503OnClosing: false,
    // A URL the router can't read (bad percent-encoding, an over-long segment) gets a problem body like any other bad
    // request, naming the path parameter it is in when there is one.
    frameworkErrors: (_error, request, reply) => {
      // Fastify sends these without its response hooks: the request's line is ours to write.
      reply.raw.once('finish', () => requestLog.requestCompleted(null, request, reply));
      const named = unreadablePathParameters(request, MAX_PARAM_LENGTH);
      if (named.length === 0)
        return sendProblem(
          reply,
          problem('invalid', 'The request URL is not valid.', [{ path: '', message: 'is not valid percent-encoded UTF-8' }], 'path'),
        );
      const names = named.map((e) => e.path.slice(1)).join(', ');
      return sendProblem(reply, problem('invalid', `The request has invalid path parameters: ${names}.`, named));
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  // JSON only: any other body is a 415.
  registerJsonParser(app);
  app.setValidatorCompiler(validatorCompiler(SHARED_SCHEMAS));
  app.setSerializerCompiler(serializerCompiler(SHARED_SCHEMAS));
  for (const schema of SHARED_SCHEMAS) app.addSchema(schema);
  app.decorate('podplate', podplate);
  app.decorateRequest('caller', undefined as never);
  // Once closing, every response ends its connection, the ones in flight at the signal included: no client sends its
  // next request on a connection the server is about to drop.
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onSend', (request, reply, payload, done) => {
    reply.header('x-request-id', request.id);
    if (closing) reply.header('connection', 'close');
    done(null, payload);
  });

  // Before the router's own answers (404, 405, OPTIONS), so that a listed origin can read those too.
  await registerCors(app, config.CORS_ORIGINS);
  // Before any route, so that every route's large answers are compressed.
  await registerCompression(app);
  registerProblemHandlers(app);
  await registerOpenApi(app);
  registerMetrics(app, podplate, config.METRICS_TOKEN);
  await app.register(healthRoutes);
  registerUi(app, uiDir);

  await app.register(
    async (api) => {
      api.addHook('onRequest', authenticate(podplate));
      api.addHook('onRequest', refuseWritesOfReadKeys);
      if (config.RATE_LIMIT_PER_MINUTE > 0) api.addHook('onRequest', rateLimit(podplate, config.RATE_LIMIT_PER_MINUTE));
      api.addHook('preValidation', refuseUnacceptableText);
      // An operation without query parameters refuses any, by name, like the others refuse unknown ones.
      api.addHook('onRoute', (route) => {
        route.schema = { ...route.schema, querystring: route.schema?.querystring ?? NoQuery };
      });
      await api.register(templateRoutes);
      await api.register(endpointRoutes);
      await api.register(registryAuthRoutes);
      await api.register(meRoutes);
      await api.register(secretRoutes);
      await api.register(accountRoutes);
    },
    { prefix: '/v1' },
  );
  return app;
}
