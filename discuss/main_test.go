package discuss

import (
	"testing"

	"go.uber.org/goleak"
)

// Ask starts no goroutine (a reader blocked on a terminal would swallow
// the person's next line); goleak holds it to that.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
