// Package providersim is an OpenAI-compatible provider on loopback (the
// `suitegen provider-sim` command). It answers like a model by delegating to a
// model.Client, and behaves like the providers suitegen is used with where
// suitegen's economics and configuration are tested:
//
//   - Quota as OpenAI-compatible providers count it: requests and tokens per
//     window (a sliding minute; tests shorten it), each request counted at
//     admission as its prompt plus its reply allowance (max_tokens or
//     max_completion_tokens; DefaultMaxOutput when it names neither), 429s
//     with retry-after and x-ratelimit-* headers.
//   - OpenAI's dialect (POST /v1/chat/completions, GET /v1/models[/{id}],
//     bearer key): reasoning models (o1, o3, o4, gpt-5 and Config.ReasoningModels)
//     refuse max_tokens, temperature and top_p with OpenAI's 400s and bill
//     reasoning tokens; an unknown model is 404 model_not_found; a wrong key
//     401 invalid_api_key.
//   - Azure's dialect (POST /openai/deployments/{name}/chat/completions and
//     GET /openai/models, with api-version and the api-key header): unknown
//     deployments are 404 DeploymentNotFound, a missing api-version 404, and
//     only x-ratelimit-remaining-* headers are sent, as Azure sends them.
//   - Open-weight servers (Config.ToolCallsInContent): tool calls written into
//     the reply's text, without ids, tool_choice ignored.
//   - Usage with cached prompt tokens (a simulated prompt cache) and a
//     tokenizer that may count more or less than suitegen's estimate
//     (Config.TokenScale).
//   - Seeded fault injection (429, 500, malformed tool arguments, unknown
//     tools and records, stalls).
//
// Everything it served is counted in GET /stats, per window too.
package providersim
