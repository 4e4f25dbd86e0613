// Package route binds each role to an ordered list of models and falls back
// along it (DA-C1): Meta and the Reviewer on a strong model, the Worker on a
// mid-tier one, the Watcher on a cheap one, each role with its own
// fallbacks, no single provider lock-in.
//
// A Router is itself a model.Model: it reads the request's role, tries the
// role's first binding and moves to the next only on a failure worth
// falling back on (overload, refusal, a model that does not exist). Every
// failed binding is reported to the context's attempt observer.
package route

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/fractal-harness/fractal/model"
)

// Binding is one model a role may use: "provider/model" and its client.
type Binding struct {
	Name  string // "anthropic/claude-sonnet-4-5"
	Model model.Model
}

// Router routes by role.
type Router struct {
	roles map[model.Role][]Binding
}

// New builds a router; every role needs at least one binding.
func New(roles map[model.Role][]Binding) (*Router, error) {
	for _, r := range model.Roles {
		if len(roles[r]) == 0 {
			return nil, fmt.Errorf("route: role %s has no model", r)
		}
	}
	for r := range roles {
		if !r.Valid() {
			return nil, fmt.Errorf("route: unknown role %q", r)
		}
	}
	return &Router{roles: roles}, nil
}

// For returns the role's bindings in order.
func (rt *Router) For(r model.Role) []Binding { return rt.roles[r] }

// Generate sends req to the first model of its role, falling back in order.
// The answer's Model names the binding that answered.
func (rt *Router) Generate(ctx context.Context, req model.Request) (model.Response, error) {
	bs := rt.roles[req.Role]
	if len(bs) == 0 {
		return model.Response{}, fmt.Errorf("route: no model for role %q", req.Role)
	}
	var errs []string
	for i, b := range bs {
		resp, err := b.Model.Generate(ctx, req)
		if err == nil {
			if resp.Model == "" {
				resp.Model = b.Name
			}
			return resp, nil
		}
		me, ok := model.AsError(err)
		if ctx.Err() != nil || !ok || !me.Fallback() || i == len(bs)-1 {
			if len(errs) > 0 {
				return model.Response{}, fmt.Errorf("%w (after falling back from %s)", err, strings.Join(errs, "; "))
			}
			return model.Response{}, err
		}
		model.ObserveAttempt(ctx, model.Attempt{N: 0, Model: b.Name, Err: "falling back to " + bs[i+1].Name + ": " + err.Error(), Kind: me.Kind})
		errs = append(errs, b.Name+": "+string(me.Kind))
	}
	return model.Response{}, errors.New("route: unreachable")
}

// Single binds every role to one model (the scripted model, tests).
func Single(name string, m model.Model) *Router {
	roles := map[model.Role][]Binding{}
	for _, r := range model.Roles {
		roles[r] = []Binding{{Name: name, Model: m}}
	}
	return &Router{roles: roles}
}
