// Package deploy holds only tests: they build every kustomize overlay in k8s/ and the run's
// Jobs (k8s/run), decode each object strictly into its Kubernetes type (or validate it against
// its CRD schema: KEDA, prometheus-operator, CloudNativePG and its Barman Cloud plugin), check
// the NATS Helm chart's values (helm/) against the chart's own, check the invariants the system
// relies on, run the database bootstrap SQL as the operator and the postgres image run it, and
// check the Dockerfile and docs/DEPLOY.md against the repository. The Kubernetes dependencies
// stay test-only.
package deploy
