// Package anthropic is the Anthropic Messages provider: a model.Model on
// the official Go SDK (github.com/anthropics/anthropic-sdk-go/v2), always
// streaming.
//
// One Generate is one assistant turn. The request's system prompt, history
// and tools are mapped onto the Messages API with prompt-cache breakpoints
// on the stable prefix (see Client.Generate); the streamed events are
// assembled here, not by the SDK's accumulator, so that malformed tool
// arguments are caught rather than silently emptied; and every failure is
// classified as a *model.Error, so the retry loop (package retry, which
// owns all retries: the SDK's are disabled) and the host's fallback can
// decide what to do. Each attempt is reported to the context's attempt
// observer.
//
// Configuration comes only from Config: nothing is read from the
// environment (ANTHROPIC_API_KEY and friends are the caller's business),
// so a run's model binding is exactly what its configuration says.
package anthropic

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/fractal-harness/fractal/model"
	"github.com/fractal-harness/fractal/model/retry"
	mstream "github.com/fractal-harness/fractal/model/stream"
)

// Provider is the provider name in errors and attempts.
const Provider = "anthropic"

// Defaults for zero Config fields.
const (
	DefaultMaxTokens      = 8192
	DefaultConnectTimeout = 10 * time.Second
	// DefaultIdleTimeout ends an attempt whose stream has sent nothing, not
	// even a ping, for this long. The API pings idle streams, so a silence
	// this long is a dead connection; ending the attempt turns it into a
	// retryable network error instead of a call that hangs until the
	// caller's deadline.
	DefaultIdleTimeout = 5 * time.Minute
)

// Config binds a Client to one model at one endpoint.
type Config struct {
	// APIKey is required.
	APIKey string
	// BaseURL overrides https://api.anthropic.com (a gateway, a proxy, a
	// test server).
	BaseURL string
	// Model is the model id, for example "claude-sonnet-4-5". Required.
	Model string
	// MaxTokens bounds the answer when the request does not
	// (default DefaultMaxTokens). The Messages API requires a bound.
	MaxTokens int
	// HTTPClient replaces the client built from ConnectTimeout. It must not
	// have a Timeout shorter than the longest answer: a streamed answer can
	// take minutes. Use the context for deadlines.
	HTTPClient *http.Client
	// Retry is the retry policy (see package retry).
	Retry retry.Policy
	// ConnectTimeout bounds dialing and the TLS handshake
	// (default DefaultConnectTimeout). Ignored when HTTPClient is set.
	ConnectTimeout time.Duration
	// IdleTimeout ends an attempt whose stream stays silent this long
	// (default DefaultIdleTimeout; negative: never).
	IdleTimeout time.Duration
}

// Client is a model.Model for one Anthropic model. It is safe for
// concurrent use.
type Client struct {
	cfg       Config
	messages  sdk.MessageService
	transport *http.Transport // ours to close; nil when the caller gave a client
}

var _ model.Model = (*Client)(nil)

// New checks cfg and builds a Client. It makes no network call.
func New(cfg Config) (*Client, error) {
	if strings.TrimSpace(cfg.APIKey) == "" {
		return nil, fmt.Errorf("anthropic: Config.APIKey is empty (set it, for example from ANTHROPIC_API_KEY)")
	}
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, fmt.Errorf("anthropic: Config.Model is empty (name a model, for example claude-sonnet-4-5)")
	}
	if cfg.MaxTokens <= 0 {
		cfg.MaxTokens = DefaultMaxTokens
	}
	if cfg.ConnectTimeout <= 0 {
		cfg.ConnectTimeout = DefaultConnectTimeout
	}
	if cfg.IdleTimeout == 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	c := &Client{cfg: cfg}
	hc := cfg.HTTPClient
	if hc == nil {
		c.transport = mstream.NewTransport(cfg.ConnectTimeout)
		hc = &http.Client{Transport: c.transport}
	}
	opts := []option.RequestOption{
		// Only Config counts: no credential, base URL or header from the
		// environment or a profile on disk.
		option.WithoutEnvironmentDefaults(),
		option.WithAPIKey(cfg.APIKey),
		option.WithHTTPClient(hc),
		// retry.Do owns retries, so that each attempt is observed once and
		// usage is never counted twice.
		option.WithMaxRetries(0),
	}
	if cfg.BaseURL != "" {
		u, err := url.Parse(cfg.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("anthropic: Config.BaseURL %q is not an http(s) URL", cfg.BaseURL)
		}
		opts = append(opts, option.WithBaseURL(cfg.BaseURL))
	}
	c.messages = sdk.NewClient(opts...).Messages
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
// Config.Retry. See the package documentation for the mapping; errors are
// always classified (*model.Error, possibly wrapped): a request this
// package cannot map is ErrBadRequest without any call; a refusal
// (stop_reason "refusal") is ErrRefused; stop_reason "max_tokens" is a
// normal Response with that StopReason.
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

// attempt is one streamed call.
func (c *Client) attempt(ctx context.Context, params sdk.MessageNewParams) (model.Response, error) {
	actx, touch, stop := mstream.WithIdle(ctx, c.cfg.IdleTimeout)
	defer stop()

	stream := c.messages.NewStreaming(actx, params)
	defer stream.Close()
	a := newAssembler()
	for stream.Next() {
		touch()
		ev := stream.Current()
		if err := a.add(&ev); err != nil {
			return model.Response{}, &model.Error{Kind: model.ErrServer, Provider: Provider, Model: c.cfg.Model,
				Msg: "malformed stream: " + err.Error(), Err: err}
		}
	}
	if err := stream.Err(); err != nil {
		return model.Response{}, c.classify(ctx, actx, err)
	}
	if !a.stopped {
		// The body ended cleanly but the message did not: a proxy or the
		// server dropped the stream. The same call may well succeed.
		msg := "stream ended before message_stop"
		if !a.started {
			msg = "stream ended before message_start"
		}
		return model.Response{}, &model.Error{Kind: model.ErrNetwork, Provider: Provider, Model: c.cfg.Model, Msg: msg}
	}
	if a.stop == "refusal" {
		msg := "the model refused (stop_reason refusal)"
		if a.refusal.Explanation != "" {
			msg += ": " + a.refusal.Explanation
		}
		if a.refusal.Category != "" {
			msg += " [" + string(a.refusal.Category) + "]"
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
		// The caller's deadline or cancellation, whatever the transport
		// made of it; wrap the context's error so errors.Is sees it.
		e.Kind, e.Err, e.Msg = k, parent.Err(), err.Error()
		return e
	}
	if mstream.Idle(actx) {
		e.Kind, e.Err = model.ErrNetwork, mstream.ErrIdle
		e.Msg = fmt.Sprintf("no stream event for %s", c.cfg.IdleTimeout)
		return e
	}
	var ae *sdk.Error
	if errors.As(err, &ae) {
		classifyAPI(e, ae)
		return e
	}
	e.Msg = err.Error()
	var ue *url.Error
	switch {
	case retry.IsNetwork(err), errors.As(err, &ue):
		e.Kind = model.ErrNetwork
	default:
		// An event whose data is not the JSON the protocol promises, or
		// another failure inside the stream: the server's fault, and the
		// next attempt may not repeat it.
		e.Kind = model.ErrServer
	}
	return e
}

// classifyAPI fills e from an API error: an HTTP error status, or an
// error event in the middle of a stream (status 200, the kind from the
// error's type).
func classifyAPI(e *model.Error, ae *sdk.Error) {
	typ := string(ae.Type())
	msg := ae.Message
	if msg == "" {
		msg = strings.TrimSpace(ae.RawJSON())
	}
	if typ != "" {
		msg = typ + ": " + msg
	}
	if ae.RequestID != "" {
		msg += " (request-id " + ae.RequestID + ")"
	}
	e.Msg = msg
	if ae.StatusCode >= 400 {
		e.Status = ae.StatusCode
		e.Kind = retry.KindForStatus(ae.StatusCode)
		if ae.Response != nil {
			e.RetryAfter = retry.ParseRetryAfter(ae.Response.Header, time.Now())
		}
		switch typ {
		case "not_found_error": // an unknown model, whatever the status
			e.Kind = model.ErrNotFound
		case "overloaded_error":
			e.Kind = model.ErrOverloaded
		}
		return
	}
	e.Msg = "error event mid-stream: " + msg
	e.Kind = kindForType(typ)
}

// kindForType maps the error types of the Messages API
// (docs: "errors") for an error that arrives as a stream event.
func kindForType(typ string) model.ErrorKind {
	switch typ {
	case "overloaded_error":
		return model.ErrOverloaded
	case "rate_limit_error":
		return model.ErrRateLimited
	case "authentication_error", "permission_error", "billing_error":
		return model.ErrAuth
	case "not_found_error":
		return model.ErrNotFound
	case "invalid_request_error", "request_too_large":
		return model.ErrBadRequest
	default: // api_error, timeout_error and anything new: the server's side
		return model.ErrServer
	}
}
