package route

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/fractal-harness/fractal/model"
)

type fixed struct {
	err  error
	text string
	n    int
}

func (f *fixed) Generate(ctx context.Context, req model.Request) (model.Response, error) {
	f.n++
	if f.err != nil {
		return model.Response{}, f.err
	}
	return model.Response{Text: f.text}, nil
}

func roles(bs ...Binding) map[model.Role][]Binding {
	m := map[model.Role][]Binding{}
	for _, r := range model.Roles {
		m[r] = bs
	}
	return m
}

// DA-C1, issue #3: a role falls back along its list on overload, refusal or
// an unknown model — and only on those; every fallback is observed.
func TestFallback(t *testing.T) {
	for _, kind := range []model.ErrorKind{model.ErrOverloaded, model.ErrRefused, model.ErrNotFound} {
		first := &fixed{err: &model.Error{Kind: kind}}
		second := &fixed{text: "ok"}
		rt, err := New(roles(Binding{"a/one", first}, Binding{"b/two", second}))
		if err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		var seen []model.Attempt
		ctx := model.WithAttemptObserver(context.Background(), func(a model.Attempt) { mu.Lock(); seen = append(seen, a); mu.Unlock() })
		resp, err := rt.Generate(ctx, model.Request{Role: model.Worker})
		if err != nil || resp.Text != "ok" || resp.Model != "b/two" || len(seen) != 1 || seen[0].Kind != kind {
			t.Fatalf("%s: %v %+v %+v", kind, err, resp, seen)
		}
	}
	for _, kind := range []model.ErrorKind{model.ErrBadRequest, model.ErrAuth, model.ErrRateLimited} {
		first := &fixed{err: &model.Error{Kind: kind}}
		second := &fixed{text: "ok"}
		rt, _ := New(roles(Binding{"a/one", first}, Binding{"b/two", second}))
		if _, err := rt.Generate(context.Background(), model.Request{Role: model.Meta}); err == nil || second.n != 0 {
			t.Fatalf("%s: fell back (%v)", kind, err)
		}
	}
	last := &fixed{err: &model.Error{Kind: model.ErrOverloaded}}
	rt, _ := New(roles(Binding{"a/one", &fixed{err: &model.Error{Kind: model.ErrNotFound}}}, Binding{"b/two", last}))
	_, err := rt.Generate(context.Background(), model.Request{Role: model.Meta})
	var me *model.Error
	if !errors.As(err, &me) || me.Kind != model.ErrOverloaded {
		t.Fatalf("last error: %v", err)
	}
}

func TestNewNeedsEveryRole(t *testing.T) {
	if _, err := New(map[model.Role][]Binding{model.Meta: {{"a/b", &fixed{}}}}); err == nil {
		t.Fatal("a router without a worker model was built")
	}
}
