package stream

import (
	"context"
	"testing"
	"time"
)

// A silent stream ends with ErrIdle; one that keeps talking does not.
func TestWithIdle(t *testing.T) {
	ctx, touch, stop := WithIdle(context.Background(), 30*time.Millisecond)
	defer stop()
	for range 5 {
		time.Sleep(10 * time.Millisecond)
		touch()
	}
	if ctx.Err() != nil {
		t.Fatal("a talking stream was ended")
	}
	<-ctx.Done()
	if !Idle(ctx) {
		t.Fatalf("cause %v", context.Cause(ctx))
	}
	ctx2, _, stop2 := WithIdle(context.Background(), 0)
	stop2()
	if Idle(ctx2) {
		t.Fatal("no watch, yet idle")
	}
}
