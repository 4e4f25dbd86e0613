package intake_test

import (
	"testing"

	"go.uber.org/goleak"
)

// intake starts no goroutine: a reader left blocked on the terminal would
// swallow the person's next line. goleak holds it to that.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
