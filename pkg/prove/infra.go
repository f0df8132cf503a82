package prove

import (
	"context"
	"errors"

	"github.com/suitegen/suitegen/pkg/outage"
	"github.com/suitegen/suitegen/pkg/script"
)

// infrastructure reports an outage of the database (outage.Is, the one
// classifier the writer uses too) or the end of ctx: a failure that says
// nothing about the scenario, so Prove returns it as an error rather than
// refusing. A handler stopped by one of its limits is not one.
func infrastructure(err error) bool {
	if err == nil || errors.Is(err, script.ErrLimit) {
		return false
	}
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || outage.Is(err)
}
