// Package openai is model.Client for OpenAI-compatible chat completions, with
// one profile per kind of provider, chosen by Config.Profile or detected by
// Detect from the endpoint:
//
//   - ProfileOpenAI (api.openai.com): reasoning models (o1, o3, o4-mini,
//     gpt-5…) get max_completion_tokens and never a temperature; others get
//     max_tokens.
//   - ProfileAzure (Azure OpenAI): the request goes to
//     {endpoint}/openai/deployments/{deployment}/chat/completions?api-version=…
//     with an api-key header, through go-openai's Azure configuration;
//     Config.Model names the deployment.
//   - ProfileCompatible (vLLM, Ollama, llama.cpp's server, proxies):
//     max_tokens; a tool call the server left in the reply's text (JSON, or
//     <tool_call>…</tool_call> as Hermes-style chat templates write it) is
//     recovered as a tool call; tool_choice is never sent or relied on.
//
// In every profile a tool call without an id gets one minted, every answer is
// classified once into the errors of package model (a configuration refusal
// is a *model.ConfigError that ends the run), and the shared quota
// (model.Limiter) is charged what the provider counts at admission: the
// prompt estimate, calibrated against the prompt tokens the provider reports
// (UncalibratedFactor before the first report), plus the reply allowance.
package openai
