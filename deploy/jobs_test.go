package deploy

import (
	"slices"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/suitegen/suitegen/pkg/cli"
)

// TestJobsFollowExitCodes: the planner and reviewer Jobs fail at once on
// the exit codes no retry changes (a failed run, a bad command line), retry
// the one that may succeed, and do not count a disruption as a failure; a
// pod failure policy needs restartPolicy Never.
func TestJobsFollowExitCodes(t *testing.T) {
	schemas := loadSchemas(t)
	dir := runDir
	objs := build(t, dir, schemas)
	for _, name := range []string{"planner", "reviewer"} {
		j := jobOf(objs, name)
		if j == nil {
			t.Fatalf("%s: no Job %s", dir, name)
		}
		if j.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
			t.Errorf("%s: Job %s restarts %s; a pod failure policy needs Never", dir, name, j.Spec.Template.Spec.RestartPolicy)
		}
		p := j.Spec.PodFailurePolicy
		if p == nil {
			t.Fatalf("%s: Job %s has no pod failure policy: a failed run would be retried %d times", dir, name, *j.Spec.BackoffLimit)
		}
		var failJob []int32
		ignoresDisruption := false
		for _, r := range p.Rules {
			switch {
			case r.Action == batchv1.PodFailurePolicyActionFailJob && r.OnExitCodes != nil &&
				r.OnExitCodes.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn:
				failJob = append(failJob, r.OnExitCodes.Values...)
				if r.OnExitCodes.ContainerName == nil || *r.OnExitCodes.ContainerName != name {
					t.Errorf("%s: Job %s's exit-code rule names no container %s", dir, name, name)
				}
			case r.Action == batchv1.PodFailurePolicyActionIgnore && len(r.OnPodConditions) > 0:
				ignoresDisruption = r.OnPodConditions[0].Type == corev1.DisruptionTarget
			}
		}
		for _, code := range []int32{cli.ExitFail, cli.ExitUsage} {
			if !slices.Contains(failJob, code) {
				t.Errorf("%s: Job %s retries exit %d", dir, name, code)
			}
		}
		if slices.Contains(failJob, cli.ExitRetry) {
			t.Errorf("%s: Job %s fails at once on exit %d, which a retry may fix", dir, name, cli.ExitRetry)
		}
		if !ignoresDisruption {
			t.Errorf("%s: Job %s counts a disrupted pod as a failure", dir, name)
		}
	}
}
