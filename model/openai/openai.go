// Package openai is the OpenAI-compatible Chat Completions provider: a
// model.Model on the official Go SDK (github.com/openai/openai-go/v3),
// always streaming. With Config.BaseURL it talks to any server that speaks
// the protocol: llama.cpp's llama-server, vLLM, Ollama, LM Studio,
// gateways.
//
// One Generate is one assistant turn. Streamed chunks are assembled here
// (tool calls by index, argument text validated so malformed arguments
// reach the host as ToolCall.Invalid, usage from the usage-only chunk);
// every failure is classified as a *model.Error; retries belong to
// package retry (the SDK's are disabled) and each attempt is reported to
// the context's attempt observer.
//
// Configuration comes only from Config: nothing is read from the
// environment. In particular OPENAI_API_KEY is never sent to a BaseURL the
// configuration did not pair it with.
package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/fractal-harness/fractal/model"
	"github.com/fractal-harness/fractal/model/retry"
	mstream "github.com/fractal-harness/fractal/model/stream"
)

// Provider is the provider name in errors and attempts.
const Provider = "openai"

// The two names of the output bound (Config.MaxTokensField).
const (
	// MaxCompletionTokens is OpenAI's current field; its reasoning models
	// reject max_tokens.
	MaxCompletionTokens = "max_completion_tokens"
	// MaxTokens is the deprecated field that every OpenAI-compatible
	// server reads (llama.cpp, vLLM, Ollama, LM Studio); Ollama ignores
	// max_completion_tokens.
	MaxTokens = "max_tokens"
)

// DefaultConnectTimeout bounds dialing and the TLS handshake.
const DefaultConnectTimeout = 10 * time.Second

// Config binds a Client to one model at one endpoint.
type Config struct {
	// APIKey is sent as a bearer token. Required for OpenAI itself; may
	// be empty with a BaseURL (local servers need none).
	APIKey string
	// BaseURL is the API root including the version path, for example
	// http://localhost:8080/v1 (llama-server), http://localhost:8000/v1
	// (vLLM), http://localhost:11434/v1 (Ollama). Empty: OpenAI.
	BaseURL string
	// Model is the model id. Required (local servers that serve one model
	// accept any name, but the field is still sent).
	Model string
	// MaxTokens bounds the answer when the request does not; 0 leaves it
	// to the server.
	MaxTokens int
	// MaxTokensField names the bound on the wire: MaxCompletionTokens or
	// MaxTokens. Empty chooses by endpoint: max_completion_tokens for
	// OpenAI (no BaseURL), max_tokens for any BaseURL.
	MaxTokensField string
	// Store asks OpenAI to store the completions and, with them, sends
	// metadata {"fractal_role", "fractal_instance"} (OpenAI rejects
	// metadata without store). Off by default: stored completions keep
	// the conversation on OpenAI's side.
	Store bool
	// HTTPClient replaces the client built from ConnectTimeout. It must not
	// have a Timeout shorter than the longest answer; use the context.
	HTTPClient *http.Client
	// Retry is the retry policy (see package retry).
	Retry retry.Policy
	// ConnectTimeout bounds dialing and the TLS handshake
	// (default DefaultConnectTimeout). Ignored when HTTPClient is set.
	ConnectTimeout time.Duration
	// IdleTimeout, when positive, ends an attempt whose stream sends
	// nothing for this long, as a retryable network error. Off by default:
	// OpenAI's reasoning models and a local server reading a long prompt
	// can be silent for minutes, and the protocol has no keep-alive.
	IdleTimeout time.Duration
}

// Client is a model.Model for one model at one endpoint. It is safe for
// concurrent use.
type Client struct {
	cfg            Config
	maxTokensField string
	completions    sdk.ChatCompletionService
	transport      *http.Transport // ours to close; nil when the caller gave a client
}

var _ model.Model = (*Client)(nil)

// New checks cfg and builds a Client. It makes no network call.
func New(cfg Config) (*Client, error) {
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, fmt.Errorf("openai: Config.Model is empty")
	}
	if strings.TrimSpace(cfg.APIKey) == "" && cfg.BaseURL == "" {
		return nil, fmt.Errorf("openai: Config.APIKey is empty (required for api.openai.com; set BaseURL for a local server that needs none)")
	}
	if cfg.ConnectTimeout <= 0 {
		cfg.ConnectTimeout = DefaultConnectTimeout
	}
	c := &Client{cfg: cfg, maxTokensField: cfg.MaxTokensField}
	switch cfg.MaxTokensField {
	case MaxTokens, MaxCompletionTokens:
	case "":
		c.maxTokensField = MaxTokens
		if cfg.BaseURL == "" {
			c.maxTokensField = MaxCompletionTokens
		}
	default:
		return nil, fmt.Errorf("openai: Config.MaxTokensField %q is neither %q nor %q", cfg.MaxTokensField, MaxTokens, MaxCompletionTokens)
	}
	hc := cfg.HTTPClient
	if hc == nil {
		c.transport = mstream.NewTransport(cfg.ConnectTimeout)
		hc = &http.Client{Transport: c.transport}
	}
	// The service is built from these options alone, not through
	// openai.NewClient, which would add OPENAI_API_KEY, OPENAI_BASE_URL,
	// OPENAI_ORG_ID and custom headers from the environment: a real
	// OpenAI key must never travel to a local server or gateway.
	opts := []option.RequestOption{
		option.WithHTTPClient(hc),
		option.WithEnvironmentProduction(),
		// retry.Do owns retries, so that each attempt is observed once and
		// usage is never counted twice.
		option.WithMaxRetries(0),
	}
	if cfg.BaseURL != "" {
		u, err := url.Parse(cfg.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("openai: Config.BaseURL %q is not an http(s) URL", cfg.BaseURL)
		}
		opts = append(opts, option.WithBaseURL(cfg.BaseURL))
	}
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	}
	c.completions = sdk.NewChatCompletionService(opts...)
	return c, nil
}

// Model is the configured model id.
func (c *Client) Model() string { return c.cfg.Model }

// CloseIdleConnections closes the idle connections of the client's own
// transport (not of a Config.HTTPClient, which belongs to the caller).
func (c *Client) CloseIdleConnections() {
	if c.transport != nil {
		c.transport.CloseIdleConnections()
	}
}

// Generate produces one assistant turn, retrying transient failures under
// Config.Retry. Errors are always classified (*model.Error, possibly
// wrapped): a request this package cannot map is ErrBadRequest without
// any call; finish_reason "content_filter" or a refusal is ErrRefused;
// finish_reason "length" is a normal Response with StopReason
// "max_tokens".
func (c *Client) Generate(ctx context.Context, req model.Request) (model.Response, error) {
	params, err := c.params(req)
	if err != nil {
		return model.Response{}, &model.Error{Kind: model.ErrBadRequest, Provider: Provider, Model: c.cfg.Model,
			Msg: "cannot map request: " + err.Error(), Err: err}
	}
	return retry.Do(ctx, c.cfg.Retry, c.cfg.Model, func(ctx context.Context) (model.Response, error) {
		return c.attempt(ctx, params)
	})
}

func (c *Client) attempt(ctx context.Context, params sdk.ChatCompletionNewParams) (model.Response, error) {
	actx, touch, stop := mstream.WithIdle(ctx, c.cfg.IdleTimeout)
	defer stop()

	stream := c.completions.NewStreaming(actx, params)
	defer stream.Close()
	var a assembler
	for stream.Next() {
		touch()
		ch := stream.Current()
		a.add(&ch)
	}
	if err := stream.Err(); err != nil {
		return model.Response{}, c.classify(ctx, actx, err)
	}
	// The SDK ends the stream the same way at [DONE] and at a clean end of
	// the body, so the finish_reason is what tells a finished answer from
	// a dropped one.
	if a.finish == "" {
		return model.Response{}, &model.Error{Kind: model.ErrNetwork, Provider: Provider, Model: c.cfg.Model,
			Msg: "stream ended before a finish_reason"}
	}
	if a.finish == "content_filter" || a.refusal.Len() > 0 {
		msg := "the model refused (finish_reason " + a.finish + ")"
		if a.refusal.Len() > 0 {
			msg += ": " + a.refusal.String()
		}
		return model.Response{}, &model.Error{Kind: model.ErrRefused, Provider: Provider, Model: c.cfg.Model, Msg: msg}
	}
	return a.response(c.cfg.Model), nil
}

// classify turns a failed call into a *model.Error. parent is the
// caller's context, actx the attempt's (ended early by IdleTimeout).
func (c *Client) classify(parent, actx context.Context, err error) *model.Error {
	e := &model.Error{Provider: Provider, Model: c.cfg.Model, Err: err}
	if k := retry.ContextKind(parent); k != "" {
		e.Kind, e.Err, e.Msg = k, parent.Err(), err.Error()
		return e
	}
	if mstream.Idle(actx) {
		e.Kind, e.Err = model.ErrNetwork, mstream.ErrIdle
		e.Msg = fmt.Sprintf("no stream data for %s", c.cfg.IdleTimeout)
		return e
	}
	var ae *sdk.Error
	if errors.As(err, &ae) {
		classifyHTTP(e, ae)
		return e
	}
	var se *ssestream.StreamError
	if errors.As(err, &se) {
		classifyStreamError(e, se.Event.Data)
		return e
	}
	e.Msg = err.Error()
	var ue *url.Error
	switch {
	case retry.IsNetwork(err), errors.As(err, &ue):
		e.Kind = model.ErrNetwork
	default:
		// A chunk that is not the JSON the protocol promises: the
		// server's fault, and the next attempt may not repeat it.
		e.Kind = model.ErrServer
	}
	return e
}

// classifyHTTP fills e from an HTTP error status. Chat Completions has no
// 529: a 503 is how OpenAI ("engine overloaded"), vLLM and llama-server
// (no free slot, model loading) say they are overloaded, so it is
// ErrOverloaded: retried, and a reason to fall back.
func classifyHTTP(e *model.Error, ae *sdk.Error) {
	e.Status = ae.StatusCode
	e.Kind = retry.KindForStatus(ae.StatusCode)
	if ae.StatusCode == http.StatusServiceUnavailable {
		e.Kind = model.ErrOverloaded
	}
	if ae.Response != nil {
		e.RetryAfter = retry.ParseRetryAfter(ae.Response.Header, time.Now())
	}
	e.Msg = ae.Message
	if e.Msg == "" {
		e.Msg = strings.TrimSpace(ae.RawJSON())
	}
	if ae.Code != "" {
		e.Msg = ae.Code + ": " + e.Msg
	}
	if ae.Response != nil {
		if id := ae.Response.Header.Get("X-Request-Id"); id != "" {
			e.Msg += " (request-id " + id + ")"
		}
	}
	switch ae.Code {
	case "model_not_found": // an unknown model, whatever the status
		e.Kind = model.ErrNotFound
	case "insufficient_quota":
		// A 429 that waiting does not cure: the account is out of credit.
		e.Kind = model.ErrAuth
	}
}

// classifyStreamError reads an error sent as a chunk in the middle of a
// stream ({"error": {"message", "type", "code"}}). Its code, when it is an
// HTTP status, decides; otherwise its type or code names the kind; an
// error the server does not explain is taken as the server's (retried).
func classifyStreamError(e *model.Error, data []byte) {
	var body struct {
		Error struct {
			Message string          `json:"message"`
			Type    string          `json:"type"`
			Code    json.RawMessage `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal(data, &body)
	code := strings.Trim(string(body.Error.Code), `"`)
	if code == "null" {
		code = ""
	}
	e.Msg = "error event mid-stream: " + strings.TrimSpace(body.Error.Type+" "+code+": "+body.Error.Message)
	if body.Error.Message == "" && body.Error.Type == "" {
		e.Msg = "error event mid-stream: " + strings.TrimSpace(string(data))
	}
	if n, err := strconv.Atoi(code); err == nil && n >= 400 {
		e.Kind = retry.KindForStatus(n)
		if n == http.StatusServiceUnavailable {
			e.Kind = model.ErrOverloaded
		}
		return
	}
	s := strings.ToLower(body.Error.Type + " " + code)
	switch {
	case strings.Contains(s, "insufficient_quota"):
		e.Kind = model.ErrAuth
	case strings.Contains(s, "rate_limit"):
		e.Kind = model.ErrRateLimited
	case strings.Contains(s, "overload"), strings.Contains(s, "unavailable"):
		e.Kind = model.ErrOverloaded
	case strings.Contains(s, "model_not_found"):
		e.Kind = model.ErrNotFound
	case strings.Contains(s, "content_filter"):
		e.Kind = model.ErrRefused
	case strings.Contains(s, "invalid_request"), strings.Contains(s, "context_length"):
		e.Kind = model.ErrBadRequest
	case strings.Contains(s, "auth"), strings.Contains(s, "permission"):
		e.Kind = model.ErrAuth
	default:
		e.Kind = model.ErrServer
	}
}
