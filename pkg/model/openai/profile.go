package openai

import (
	"fmt"
	"net/url"
	"strings"
)

// Profile is a kind of OpenAI-compatible provider.
type Profile string

// Profiles.
const (
	ProfileOpenAI     Profile = "openai"
	ProfileAzure      Profile = "azure"
	ProfileCompatible Profile = "openai-compatible"
)

// Profiles lists the profiles, for flag help and errors.
var Profiles = []Profile{ProfileOpenAI, ProfileAzure, ProfileCompatible}

// ParseProfile reads a profile name; "" and "auto" mean detect.
func ParseProfile(s string) (Profile, error) {
	switch p := Profile(strings.ToLower(strings.TrimSpace(s))); p {
	case "", "auto":
		return "", nil
	case ProfileOpenAI, ProfileAzure, ProfileCompatible:
		return p, nil
	}
	return "", fmt.Errorf("unknown provider %q (want auto, openai, azure or openai-compatible)", s)
}

// Detect picks the profile of an endpoint: no URL or api.openai.com is
// OpenAI; an Azure OpenAI host (*.openai.azure.com,
// *.cognitiveservices.azure.com, *.services.ai.azure.com) is Azure; any other
// URL is an OpenAI-compatible server.
func Detect(baseURL string) Profile {
	if strings.TrimSpace(baseURL) == "" {
		return ProfileOpenAI
	}
	u, err := url.Parse(baseURL)
	if err != nil {
		return ProfileCompatible
	}
	host := strings.ToLower(u.Hostname())
	switch {
	case host == "api.openai.com":
		return ProfileOpenAI
	case strings.HasSuffix(host, ".openai.azure.com"), strings.HasSuffix(host, ".cognitiveservices.azure.com"),
		strings.HasSuffix(host, ".services.ai.azure.com"):
		return ProfileAzure
	}
	return ProfileCompatible
}

// Reasoning says whether the model is a reasoning model (it takes
// max_completion_tokens, counts reasoning tokens, and accepts no sampling
// parameters).
type Reasoning string

// Reasoning settings.
const (
	ReasoningAuto Reasoning = ""    // from the model name (IsReasoningModel)
	ReasoningYes  Reasoning = "yes" // e.g. an Azure deployment named for its team, not its model
	ReasoningNo   Reasoning = "no"
)

// ParseReasoning reads a reasoning setting: auto, yes/true or no/false.
func ParseReasoning(s string) (Reasoning, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "auto":
		return ReasoningAuto, nil
	case "yes", "true", "on":
		return ReasoningYes, nil
	case "no", "false", "off":
		return ReasoningNo, nil
	}
	return "", fmt.Errorf("unknown reasoning setting %q (want auto, yes or no)", s)
}

// IsReasoningModel reports whether a model name is one of OpenAI's reasoning
// families (o1, o3, o4, gpt-5 and later), with or without a vendor prefix
// ("openai/o3-mini") as proxies write it. The prefixes are go-openai's, which
// refuses max_tokens for these names before sending, so the name decides in
// every profile.
func IsReasoningModel(name string) bool {
	n := strings.ToLower(name)
	if i := strings.LastIndexByte(n, '/'); i >= 0 {
		n = n[i+1:]
	}
	for _, p := range []string{"o1", "o3", "o4", "gpt-5", "gpt-6"} {
		if strings.HasPrefix(n, p) {
			return true
		}
	}
	return false
}
