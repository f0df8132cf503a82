package testenv

import (
	"os"
	"testing"
)

// passEnv names the variable make test sets on its race-detecting pass.
const passEnv = "SUITEGEN_TEST_PASS"

// OutsideRace marks a test the race detector adds nothing to: the code it
// exercises runs in other processes (binaries built without it), or is
// CPU-bound work on whole contracts whose concurrent paths the race pass
// runs on small ones. Instrumented, such a test costs three to ten times
// its time. make test runs two passes at once: one with -race and
// SUITEGEN_TEST_PASS=race, where OutsideRace skips, and one without, of
// only the tests that call it (listed by scripts/outsiderace). Run alone
// (go test -race, no SUITEGEN_TEST_PASS) the test runs as any other.
func OutsideRace(t testing.TB, why string) {
	t.Helper()
	if raceDetector && os.Getenv(passEnv) == "race" {
		t.Skipf("runs in make test's pass without the race detector: %s", why)
	}
}
