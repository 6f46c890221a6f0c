import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { Account, AccountCreate, ApiKey, ApiKeyCreate, CreatedApiKey } from '../../domain/account.ts';
import { idempotencyKeyHeader, idempotencyOf, sendAnswer } from '../plugins/idempotency.ts';
import { problemResponses } from '../plugins/problem.ts';
import { IdParam } from '../schemas.ts';

// Routes of /v1/accounts and their keys: how a GPU cloud's sign-up provisions users without database access.

const tags = ['accounts'];
/** An account's name in a path: checked by the use case (domain/account.ts `accountName`), like every account name. */
const accountName = { account: Type.String({ maxLength: 200, description: 'The account’s name.' }) };
const AccountParams = Type.Object(accountName, { additionalProperties: false });
const KeyParams = Type.Object({ ...accountName, ...IdParam('keyId', 'API key').properties }, { additionalProperties: false });

export const accountRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { accounts, keys } = app.podplate;

  app.post('/accounts', {
    schema: {
      tags,
      operationId: 'CreateAccount',
      summary: 'Create an account (platform keys)',
      description:
        'Makes an account, `user` by default, to give it keys with `POST /v1/accounts/{account}/keys`. Platform keys only (403 ' +
        'otherwise). A name taken is a 409.',
      body: Type.Ref(AccountCreate),
      response: {
        201: {
          description: 'The new account.',
          headers: { location: { type: 'string', description: 'Where its keys are: `/v1/accounts/{account}/keys`.' } },
          content: { 'application/json': { schema: Type.Ref(Account) } },
        },
        ...problemResponses(400, 401, 403, 409, 413, 415, 429, 503),
      },
    },
    handler: async (request, reply) => {
      const account = await accounts.create(request.caller, request.body);
      return reply
        .code(201)
        .header('location', `/v1/accounts/${encodeURIComponent(account.name)}/keys`)
        .send(account);
    },
  });

  app.post('/accounts/:account/keys', {
    schema: {
      tags,
      operationId: 'CreateApiKey',
      summary: 'Create an API key',
      description:
        'Makes a key for the account: a platform key for any account, a user key for its own (another account is a 404), never ' +
        'with more access than its own, nor expiring later than its own. The key is in this answer and never again: only its ' +
        'SHA-256 digest is kept. A `read` key may read and make no change. An account holds at most ' +
        '`QUOTA_API_KEYS_PER_ACCOUNT` keys, revoked and expired ones counting for 30 days after they end (403 ' +
        '`quota-exceeded` beyond).',
      params: AccountParams,
      headers: Type.Object(
        idempotencyKeyHeader(
          'a repeat with the same key and body makes no second key; since the key is shown only once, it gets a 409 ' +
            'naming the key made (revoke it if the first answer was lost).',
        ),
        { additionalProperties: true },
      ),
      body: Type.Ref(ApiKeyCreate),
      response: {
        201: {
          description: 'The new key, shown this once.',
          headers: { 'cache-control': Type.Literal('no-store', { description: 'Not to be kept by any cache: it holds the key.' }) },
          content: { 'application/json': { schema: Type.Ref(CreatedApiKey) } },
        },
        ...problemResponses(400, 401, 403, 404, 409, 413, 415, 422, 429, 503),
      },
    },
    handler: async (request, reply) => {
      const outcome = (created: CreatedApiKey) => ({ payload: created, headers: { 'cache-control': 'no-store' }, status: 201 });
      const answer = await keys.createFor(
        request.caller,
        request.params.account,
        request.body ?? {},
        idempotencyOf(request, reply, outcome),
      );
      return sendAnswer(reply, answer, outcome);
    },
  });

  app.get('/accounts/:account/keys', {
    schema: {
      tags,
      operationId: 'ListApiKeys',
      summary: 'List an account’s API keys',
      description:
        'The account’s keys that are not revoked (expired ones included), oldest first: their ids, labels, access, expiry and ' +
        'when each was last used (to the minute), never the keys. A user key lists its own account’s; another account is a 404.',
      params: AccountParams,
      response: {
        200: { description: 'The keys.', content: { 'application/json': { schema: Type.Array(Type.Ref(ApiKey)) } } },
        ...problemResponses(400, 401, 404, 429, 503),
      },
    },
    handler: async (request) => keys.listFor(request.caller, request.params.account),
  });

  app.delete('/accounts/:account/keys/:keyId', {
    schema: {
      tags,
      operationId: 'RevokeApiKey',
      summary: 'Revoke an API key',
      description:
        'Revokes the key: every process refuses it from then on (within a second). A user key revokes its own account’s keys ' +
        '(itself included); a key that is not the account’s, or already revoked, is a 404.',
      params: KeyParams,
      response: { 204: Type.Null({ description: 'Revoked.' }), ...problemResponses(400, 401, 403, 404, 429, 503) },
    },
    handler: async (request, reply) => {
      await keys.revokeFor(request.caller, request.params.account, request.params.keyId);
      return reply.code(204).send(null);
    },
  });
};
